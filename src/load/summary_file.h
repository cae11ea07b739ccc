// The map of analyze over many ranks: one rank's RankSummary as a small, versioned JSON
// file (docs/reference.md, "Rank summaries"), written by summarize and read by analyze.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "torch2pprof/analysis.h"
#include "torch2pprof/ranks.h"

namespace torch2pprof {

class ByteSource;

// The format's version: a reader refuses any other, so that a report never mixes meanings.
inline constexpr int kSummaryVersion = 1;

struct SummaryFile {
  RankSummary summary;
  std::vector<std::string> warnings;  // the trace's load warnings, said again by the reduce
};

// One JSON object, its first key "torch2pprof_summary" (the version), then the summary's
// fields in a fixed order, one line. Equal summaries encode to equal bytes.
std::string EncodeSummary(const SummaryFile& s);

// Throws Error (kInput) naming `file`, with the byte offset of a syntax error, for
// anything that is not a summary of this version with every field of its type, or whose
// calls name collectives it does not list.
// Read as a stream, value by value: memory follows the summary's calls and steps, not its
// text (white space, nesting).
SummaryFile DecodeSummary(const std::string& file, std::string_view text);
SummaryFile ReadSummary(ByteSource& source);

}  // namespace torch2pprof
