// torch2pprof's one error type: what went wrong, in which file, at which byte.
// The core throws it anywhere; the CLI catches it once and prints one line.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace torch2pprof {

// Process exit statuses, documented in the README.
enum ExitStatus : int {
  kExitOk = 0,          // success
  kExitBadInput = 1,    // the input is missing, unreadable or not a trace
  kExitUsage = 2,       // the command line is wrong
  kExitOutput = 3,      // the output could not be written
  kExitRegression = 4,  // compare: a --fail-on rule fired
};

class Error : public std::runtime_error {
 public:
  // What the error is about; decides the exit status.
  enum class Kind { kInput, kUsage, kOutput };

  // offset < 0: no byte offset applies (a missing file, a write error).
  Error(Kind kind, std::string file, int64_t offset, std::string message);

  Kind kind() const { return kind_; }
  const std::string& file() const { return file_; }
  int64_t offset() const { return offset_; }
  const std::string& message() const { return message_; }
  int exit_status() const;

 private:
  Kind kind_;
  std::string file_;
  int64_t offset_;
  std::string message_;
};

// Shorthands for the common cases.
[[noreturn]] void ThrowInput(const std::string& file, int64_t offset, const std::string& message);
[[noreturn]] void ThrowOutput(const std::string& file, const std::string& message);

}  // namespace torch2pprof
