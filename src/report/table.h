// One description per report table — its columns, each with an exact value for scripts
// and a short one for people — written as JSON, CSV, aligned text and markdown.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/utf8.h"
#include "report/format.h"
#include "torch2pprof/error.h"
#include "torch2pprof/report.h"

namespace torch2pprof::report {

// A cell: JSON text (a string, an exact number, or null) and what people read.
struct Cell {
  enum Kind { kString, kNumber, kNull } kind;
  std::string text;     // exact: JSON and CSV
  std::string display;  // text and markdown
};
// A string from the trace: people read it with its control characters made visible.
inline Cell Text(std::string s) { return {Cell::kString, s, VisibleText(s)}; }
inline Cell Int(int64_t v) { return {Cell::kNumber, std::to_string(v), Count(static_cast<uint64_t>(v < 0 ? -v : v))}; }
inline Cell SignedInt(int64_t v) { return {Cell::kNumber, std::to_string(v), std::to_string(v)}; }
inline Cell ByteCount(int64_t b) { return {Cell::kNumber, std::to_string(b), Bytes(b)}; }
inline Cell Micros(int64_t ns) { return {Cell::kNumber, FormatMicros(ns), FormatDuration(ns)}; }
inline Cell Null(std::string display = "-") { return {Cell::kNull, "", display}; }
// A float; < 0 is null ("none").
inline Cell Real(double v, const char* display = "%.2f") {
  return v < 0 ? Null() : Cell{Cell::kNumber, Printf("%.6g", v), Printf(display, v)};
}
// part / whole as a fraction for scripts, a percentage for people.
inline Cell Share(int64_t part, int64_t whole) {
  if (whole <= 0) return {Cell::kNumber, "0", "-"};
  double r = static_cast<double>(part) / static_cast<double>(whole);
  return {Cell::kNumber, Printf("%.6g", r), Percent(part, whole)};
}
// A ratio computed elsewhere (GpuRow::utilization): defined only where its whole is.
inline Cell Fraction(double r, bool defined) {
  if (!defined) return {Cell::kNumber, "0", "-"};
  return {Cell::kNumber, Printf("%.6g", r), PercentOf(r)};
}
// A mean of nanoseconds to the nearest nanosecond (half away from zero), as microseconds
// with 3 decimals for scripts and formatted for people: the same number in both (the
// page's script formats the one scripts read, and must get what people read).
inline Cell MeanMicros(int64_t total_ns, uint64_t n) {
  if (n == 0) return {Cell::kNumber, "0", "0ns"};
  const auto d = static_cast<__int128>(n);
  const __int128 t = total_ns;
  const auto mean = static_cast<int64_t>(t >= 0 ? (2 * t + d) / (2 * d) : -((-2 * t + d) / (2 * d)));
  return {Cell::kNumber, FormatMicros(mean), FormatDuration(mean)};
}

template <typename Row>
struct Column {
  std::string key;      // JSON key and CSV heading; empty: text and markdown only
  std::string heading;  // text and markdown heading; empty: JSON and CSV only
  std::function<Cell(const Row&)> cell;
  bool csv = true;            // false: JSON only among the machine formats
  bool json = true;           // false: CSV only
  bool json_if_empty = true;  // false: JSON leaves the key out when the text is empty
};

template <typename Row>
struct DataTable {
  std::string name;  // the JSON key and the --table name
  const std::vector<Row>& rows;
  bool top;  // -top N applies
  std::vector<Column<Row>> columns;
  std::function<void(Json&, const Row&)> json_more = nullptr;  // nested arrays after the columns
  std::vector<std::vector<std::string>> text_footer = {};      // rows after the data in text and markdown
};

inline size_t Limit(size_t rows, int top) { return top > 0 ? std::min(rows, static_cast<size_t>(top)) : rows; }

template <typename Row>
size_t RowsShown(const DataTable<Row>& t, int top) {
  return t.top ? Limit(t.rows.size(), top) : t.rows.size();
}

template <typename Row>
void WriteJson(Json& j, const DataTable<Row>& t, int top) {
  j.Key(t.name);
  j.Open('[');
  for (size_t i = 0; i < RowsShown(t, top); ++i) {
    j.Open('{');
    for (const Column<Row>& c : t.columns) {
      if (c.key.empty() || !c.json) continue;
      Cell cell = c.cell(t.rows[i]);
      if (!c.json_if_empty && cell.text.empty()) continue;
      j.Key(c.key);
      if (cell.kind == Cell::kString) {
        j.String(cell.text);
      } else {
        j.Raw(cell.kind == Cell::kNull ? "null" : cell.text);
      }
    }
    if (t.json_more) t.json_more(j, t.rows[i]);
    j.Close('}');
  }
  j.Close(']');
}

template <typename Row>
std::string WriteCsv(const DataTable<Row>& t, int top) {
  std::vector<std::string> fields;
  for (const Column<Row>& c : t.columns) {
    if (c.csv && !c.key.empty()) fields.push_back(c.key);
  }
  std::string out = CsvLine(fields);
  for (size_t i = 0; i < RowsShown(t, top); ++i) {
    std::string line;
    bool first = true;
    for (const Column<Row>& c : t.columns) {
      if (!c.csv || c.key.empty()) continue;
      Cell cell = c.cell(t.rows[i]);
      line += (first ? "" : ",") + (cell.kind == Cell::kString ? CsvText(cell.text) : CsvField(cell.text));
      first = false;
    }
    out += line + "\n";
  }
  return out;
}

// The CSV tables of one kind of report, listed once: their names (CsvTables() and the
// like, which --help and the CLI's check read) and how each is written come from the same
// array, so a table is offered exactly when it can be written.
// The one marked kDefault is what an empty ReportOptions::table writes.
enum CsvDefault : bool { kNotDefault = false, kDefault = true };
template <typename Analysis>
struct CsvTable {
  const char* name;
  std::string (*write)(const Analysis& a, int rows);
  CsvDefault by_default = kNotDefault;
};

template <typename Tables>
std::vector<std::string> CsvNames(const Tables& tables) {
  std::vector<std::string> names;
  for (const auto& t : tables) names.emplace_back(t.name);
  return names;
}

// The table marked kDefault (the first, were none marked).
template <typename Tables>
std::string DefaultName(const Tables& tables) {
  for (const auto& t : tables) {
    if (t.by_default) return t.name;
  }
  return std::begin(tables)->name;
}

// The named table (the default where none is named), or a usage error listing them ("for a memory snapshot, --table
// must be…").
template <typename Tables, typename Analysis>
std::string WriteCsvTable(const Tables& tables, const Analysis& a, const ReportOptions& o, const std::string& context) {
  const std::string table = o.table.empty() ? DefaultName(tables) : o.table;
  CheckCsvTable(table, CsvNames(tables), context);
  for (const auto& t : tables) {
    if (table == t.name) return t.write(a, o.rows);
  }
  return "";  // not reached: CheckCsvTable threw
}

// The headings and display cells people read, footer rows included.
template <typename Row>
std::vector<std::vector<std::string>> DisplayRows(const DataTable<Row>& t, int top) {
  std::vector<std::vector<std::string>> rows(1);
  for (const Column<Row>& c : t.columns) {
    if (!c.heading.empty()) rows[0].push_back(c.heading);
  }
  for (size_t i = 0; i < RowsShown(t, top); ++i) {
    rows.emplace_back();
    for (const Column<Row>& c : t.columns) {
      if (!c.heading.empty()) rows.back().push_back(c.cell(t.rows[i]).display);
    }
  }
  for (const auto& f : t.text_footer) rows.push_back(f);
  return rows;
}

// A name as people read it in a narrow column: a C++ signature without its parameter
// list or "void ", without the at::native:: and (anonymous namespace):: every PyTorch
// kernel repeats; "autograd::engine::evaluate_function: X" as "evaluate_function: X".
std::string ShortName(const std::string& name);
// "step /home/u/p/cs336_basics/optimizer.py:73" -> "step …/cs336_basics/optimizer.py:73":
// a frame's absolute path kept to its last two parts, what tells two frames apart.
std::string CutPath(const std::string& name);
// A frame as a flame graph labels it, as the tables write names: ShortName, then CutPath.
std::string FrameLabel(const std::string& name);
// Each name fitted to `width` columns so that rows stay apart: a name that fits is kept;
// one that does not is shortened (ShortName, unless that makes two rows one) and cut at
// its end, or, where it parts from the row most like it past the cut, cut in the middle
// to show its start and that part. Rows that still read alike are whole, over several
// lines (the result's lines per name).
std::vector<std::vector<std::string>> DistinctNames(const std::vector<std::string>& names, size_t width);

// Aligned within kWidth columns: the first column is the flexible (name) one and is
// fitted with DistinctNames; the others are right-aligned.
std::string AlignedText(const std::vector<std::vector<std::string>>& rows, size_t indent = 0);
// A GitHub markdown table; cells have | escaped and are never cut.
std::string MarkdownTable(const std::vector<std::vector<std::string>>& rows);

template <typename Row>
std::string WriteText(const DataTable<Row>& t, int top, size_t indent = 0) {
  return AlignedText(DisplayRows(t, top), indent);
}

template <typename Row>
std::string WriteMarkdown(const DataTable<Row>& t, int top) {
  return MarkdownTable(DisplayRows(t, top));
}

}  // namespace torch2pprof::report
