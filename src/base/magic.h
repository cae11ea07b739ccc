// The first bytes of each kind of file torch2pprof reads or writes, as predicates on a
// file's head (already inflated): what the input probe (load/input.h) and the output
// guard (write/output_file.cc) both go by, so that the two never disagree.
#pragma once

#include <string_view>

namespace torch2pprof {

// A rank summary's first key, and so its magic.
inline constexpr const char kSummaryMagic[] = "torch2pprof_summary";

// A pprof profile (profile.proto): it opens with a sample type (field 1, a short
// message of small numbers), as convert writes it; trace text never does.
bool StartsLikeProfile(std::string_view head);
// analyze --timeline's output begins with exactly this (a Chrome trace torch2pprof wrote,
// which a later run may replace).
inline constexpr const char kTimelineHead[] =
    "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":\"torch2pprof analyze --timeline\"";
// A rank summary: a JSON object whose first key is kSummaryMagic.
bool StartsLikeSummary(std::string_view head);
// Folded stacks (flamegraph.pl's input): each line "frames VALUE", an integer after the
// last space (a line may end "\r\n"); a deep stack's line can be longer than the head: then its frames, text with
// ';' and no line break. The output guard replaces such a file; the probe reads one.
bool StartsLikeFolded(std::string_view head);
// A pickle's protocol: 2 to 5 (and past) from its PROTO opcode, 0 or 1 for the text and
// binary pickles that have none (their first opcodes as Python writes a dict or list),
// -1 for no pickle.
int PickleProtocol(std::string_view head);
// torch's key_averages() table saved as JSON: an array of objects with the top-level keys
// "count" and "self_cpu_us" (or "self_cpu_time_total"), and no "ph". Every object the head
// holds whole must be such a row (a trace's event may hold those keys in its args): 1
// yes, 0 no, -1 not known yet (the head ends inside the first object; `complete`: it is
// all there is, and what it holds decides).
int KeyAveragesVerdict(std::string_view head, bool complete);
inline bool StartsLikeKeyAverages(std::string_view head) { return KeyAveragesVerdict(head, true) == 1; }
// Where the first byte that is no JSON white space is (head.size(): none).
size_t FirstToken(std::string_view head);

}  // namespace torch2pprof
