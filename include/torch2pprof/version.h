// The release this build is; printed by --version and recorded in every profile.
// Bumped by hand with CHANGES.md.
#pragma once

namespace torch2pprof {
inline constexpr const char* kVersion = "0.1.0";
}  // namespace torch2pprof
