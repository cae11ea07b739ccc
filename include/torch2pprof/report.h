// Stage 6 (analyze): renders an Analysis for people (aligned text within 120 columns)
// and for scripts (one JSON document, or CSV per table), times exact to the nanosecond.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "torch2pprof/analyzer.h"

namespace torch2pprof {

struct ReportOptions {
  int top = 20;       // rows per table; 0: all
  std::string table;  // CSV: which table (see CsvTables())
};

std::string RenderText(const Analysis& analysis, const ReportOptions& options);
std::string RenderJson(const Analysis& analysis, const ReportOptions& options);
// Throws Error (kind kUsage) for an unknown table.
std::string RenderCsv(const Analysis& analysis, const ReportOptions& options);
const std::vector<std::string>& CsvTables();

// Nanoseconds as exact decimal microseconds: 1712195495519695800 -> "1712195495519695.8".
std::string FormatMicros(int64_t ns);
// For people: "850ns", "12.3us", "4.56ms", "1.23s".
std::string FormatDuration(int64_t ns);

}  // namespace torch2pprof
