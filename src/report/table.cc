#include "table.h"

namespace torch2pprof::report {

std::string AlignedText(const std::vector<std::vector<std::string>>& rows, size_t indent) {
  if (rows.empty()) return "";
  size_t n = rows[0].size();
  std::vector<size_t> w(n, 0);
  for (const auto& r : rows) {
    for (size_t i = 0; i < n && i < r.size(); ++i) w[i] = std::max(w[i], Columns(r[i]));
  }
  size_t fixed = indent;
  for (size_t i = 1; i < n; ++i) fixed += w[i] + 2;
  w[0] = std::min(w[0], kWidth > fixed + 10 ? kWidth - fixed : 10);
  std::string out;
  for (const auto& r : rows) {
    std::string line(indent, ' ');
    std::string first = Fit(r.empty() ? "" : r[0], w[0]);
    line += first + std::string(w[0] - Columns(first), ' ');
    for (size_t i = 1; i < n; ++i) {
      const std::string& cell = i < r.size() ? r[i] : "";
      line += "  " + std::string(w[i] - Columns(cell), ' ') + cell;
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

std::string MarkdownTable(const std::vector<std::vector<std::string>>& rows, size_t max_cell) {
  if (rows.empty()) return "";
  auto cell = [&](const std::string& s) {
    std::string out;
    for (char c : Fit(s, max_cell)) {
      if (c == '|')
        out += "\\|";
      else if (c == '\n')
        out += ' ';
      else
        out += c;
    }
    return out;
  };
  std::string out;
  for (size_t r = 0; r < rows.size(); ++r) {
    out += "|";
    for (const std::string& c : rows[r]) out += " " + cell(c) + " |";
    out += "\n";
    if (r == 0) {
      out += "|";
      for (size_t i = 0; i < rows[0].size(); ++i) out += i == 0 ? "---|" : "---:|";
      out += "\n";
    }
  }
  return out;
}

}  // namespace torch2pprof::report
