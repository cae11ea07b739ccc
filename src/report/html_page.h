// The parts every HTML page of the report stage shares (analyze's, the ranks', a
// snapshot's, compare's): the page's frame with its style and script, sections, tables, the flame graph.
#pragma once

#include <string>

#include "report/format.h"
#include "report/svg_chart.h"
#include "report/table.h"
#include "torch2pprof/analysis.h"

namespace torch2pprof::report {

// The page up to <main>, with the style; its end with the script (tables, flame graph, timeline).
std::string PageStart(const std::string& title, const std::string& heading, const std::string& subtitle);
std::string PageEnd();
std::string Section(const std::string& id, const std::string& title, const std::string& body);
std::string Note(const std::string& s);
std::string Card(const std::string& key, const std::string& value, const std::string& title = "");
// The flame graph of a profile (FlameOf, or DiffFlameOf: then coloured by change): the
// data as JSON for the script, which draws it; a note says what the values are.
std::string FlameBody(const FlameGraph& f, const std::string& what);

// A page holds at most this many rows of a table: a browser cannot use a million (a trace
// of a million distinct names made a page of 325 MB), and --format csv has every row.
inline constexpr size_t kHtmlRows = 10000;

// A table from its description: what people read in the cells, the exact value of each
// number in data-v (what sorting uses, and what the tests compare with --format json),
// and the JSON key of each column in data-key. With `sortable`, rows past `top` are
// hidden until asked for; rows past kHtmlRows are left out, and a note says so.
template <typename Row>
inline std::string HtmlTable(const std::string& id, const DataTable<Row>& t, int top, bool sortable) {
  std::string out = "<div class=\"tbl" + std::string(sortable ? " sortable" : "") + "\" data-top=\"" +
                    std::to_string(sortable && t.top ? top : 0) + "\">";
  if (sortable) {
    out +=
        "<div class=\"tools\" hidden><input type=\"search\" placeholder=\"filter by name\" aria-label=\"filter\">"
        "<span class=\"count\"></span></div>";
  }
  out += "<table id=\"" + id + "\"><thead><tr>";
  for (const Column<Row>& c : t.columns) {
    if (c.heading.empty()) continue;
    out +=
        "<th" + (c.key.empty() ? std::string() : " data-key=\"" + Html(c.key) + "\"") + ">" + Html(c.heading) + "</th>";
  }
  out += "</tr></thead><tbody>\n";
  size_t shown = sortable && t.top && top > 0 ? static_cast<size_t>(top) : t.rows.size();
  const size_t rows = std::min(t.rows.size(), kHtmlRows);
  for (size_t i = 0; i < rows; ++i) {
    out += i < shown ? "<tr>" : "<tr hidden>";
    bool first = true;
    for (const Column<Row>& c : t.columns) {
      if (c.heading.empty()) continue;
      Cell cell = c.cell(t.rows[i]);
      if (cell.kind == Cell::kString) {
        out += "<td" + std::string(first ? " class=\"name\" title=\"" + Html(cell.display) + "\"" : "") + ">" +
               Html(cell.display) + "</td>";
      } else {
        out += "<td class=\"num\" data-v=\"" + Html(cell.text) + "\">" + Html(cell.display) + "</td>";
      }
      first = false;
    }
    out += "</tr>\n";
  }
  out += "</tbody>";
  if (!t.text_footer.empty()) {
    out += "<tfoot>";
    for (const auto& row : t.text_footer) {
      out += "<tr>";
      for (size_t k = 0; k < row.size(); ++k)
        out += "<td" + std::string(k ? " class=\"num\"" : "") + ">" + Html(row[k]) + "</td>";
      out += "</tr>";
    }
    out += "</tfoot>";
  }
  out += "</table>";
  if (sortable) out += "<button class=\"more\" type=\"button\" hidden></button>";
  if (rows < t.rows.size()) {
    out += Note("The page holds the first " + Count(rows) + " of " + Count(t.rows.size()) +
                " rows; --format csv --table " + t.name + " has all of them.");
  }
  return out + "</div>\n";
}

}  // namespace torch2pprof::report
