// Text for formats that must be UTF-8 (protobuf strings, Python's marshal): trace names
// may hold any bytes, and an invalid sequence becomes U+FFFD.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace torch2pprof {

// The length of the valid UTF-8 sequence at s[i] (1 to 4), or 0 where none starts there
// (a stray continuation byte, an overlong form, a surrogate, past U+10FFFF, a cut-off end):
// the one rule for what counts as a character, wherever bytes of a trace are checked.
size_t Utf8SequenceAt(std::string_view s, size_t i);

std::string ValidUtf8(const std::string& s);

// Text safe to show on a terminal: control characters (C0, DEL, C1 such as CSI) as
// visible escapes ("\x1b", "\u009b"), bytes of no UTF-8 character as "\xff"; all else as
// it is. A trace's names reach reports and messages through it, so a file someone was
// sent cannot set the terminal's title, clear it, or split a one-line error in two.
std::string VisibleText(const std::string& s);
// s as a JSON string, quotes included, appended to out: the one way every JSON that
// torch2pprof writes holds a name. '"' and '\\' escaped; control characters (C0, DEL, C1)
// as \u00XX, so a report printed to a terminal acts on none; a byte of no UTF-8 character
// as U+FFFD (JSON is UTF-8, and strict readers refuse anything else).
void AppendJsonString(std::string& out, std::string_view s);
// At most `bytes` of s, cut where a character starts, then "…" where anything was cut: a
// name held once per row or frame stays bounded however long the trace made it.
std::string CutText(std::string_view s, size_t bytes);

}  // namespace torch2pprof
