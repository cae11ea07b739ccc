// The load's repair rule for event text that is not JSON: Kineto writes some traces with
// raw control characters and stray quotes inside strings, lone backslashes of Windows
// paths, bare N/A values and invalid UTF-8 (docs/reference.md: broken traces).
#pragma once

#include <string>
#include <string_view>

namespace torch2pprof {

// An event's text rewritten so that it parses, changing only what breaks JSON: a control
// character in a string becomes \u00XX; a lone backslash \\; a quote inside a string (one
// that no , : } or ] follows) \"; a byte of no UTF-8 character U+FFFD; a bare token
// that is no number, true, false or null becomes null. Valid JSON comes back unchanged.
// Events it cannot save are skipped and counted by the caller (EventParser).
std::string RepairJson(std::string_view text);

}  // namespace torch2pprof
