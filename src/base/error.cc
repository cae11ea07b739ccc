#include "torch2pprof/error.h"

namespace torch2pprof {

Error::Error(Kind kind, std::string file, int64_t offset, std::string message)
    : std::runtime_error((file.empty() ? "" : file + ": ") +
                         (offset >= 0 ? "byte " + std::to_string(offset) + ": " : "") + message),
      kind_(kind),
      file_(std::move(file)),
      offset_(offset),
      message_(std::move(message)) {}

void ThrowInput(const std::string& file, int64_t offset, const std::string& message) {
  throw Error(Error::Kind::kInput, file, offset, message);
}

void ThrowOutput(const std::string& file, const std::string& message) {
  throw Error(Error::Kind::kOutput, file, -1, message);
}

}  // namespace torch2pprof
