// torch2pprof's one error type: what went wrong, in which file, at which byte.
// The core throws it anywhere; the CLI catches it once and prints one line.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace torch2pprof {

class Error : public std::runtime_error {
 public:
  // What the error is about (the command line maps it to an exit status).
  enum class Kind { kInput, kUsage, kOutput };

  // offset < 0: no byte offset applies (a missing file, a write error).
  Error(Kind kind, std::string file, int64_t offset, std::string message);

  Kind kind() const { return kind_; }
  const std::string& file() const { return file_; }
  int64_t offset() const { return offset_; }
  const std::string& message() const { return message_; }

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
