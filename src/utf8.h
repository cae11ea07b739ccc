// Text for formats that must be UTF-8 (protobuf strings, Python's marshal): trace names
// may hold any bytes, and an invalid sequence becomes U+FFFD.
#pragma once

#include <string>

namespace torch2pprof {

std::string ValidUtf8(const std::string& s);

}  // namespace torch2pprof
