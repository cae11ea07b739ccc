#include "report/table.h"

#include <algorithm>
#include <numeric>

#include "base/utf8.h"
#include "model/frame_names.h"
#include "torch2pprof/error.h"

namespace torch2pprof::report {
namespace {

// A name's code points as byte offsets, so that cuts never split a UTF-8 sequence.
std::vector<size_t> CodePoints(const std::string& s) {
  std::vector<size_t> at;
  for (size_t i = 0; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) at.push_back(i);
  }
  return at;
}

// s's code points [from, to) as text.
std::string Slice(const std::string& s, const std::vector<size_t>& at, size_t from, size_t to) {
  from = std::min(from, at.size()), to = std::min(to, at.size());
  if (from >= to) return "";
  return s.substr(at[from], (to == at.size() ? s.size() : at[to]) - at[from]);
}

size_t CommonPrefix(const std::string& a, const std::string& b) {
  size_t n = 0;
  while (n < a.size() && n < b.size() && a[n] == b[n]) ++n;
  while (n > 0 && n < a.size() && (static_cast<unsigned char>(a[n]) & 0xC0) == 0x80) --n;  // a whole code point
  return Columns(a.substr(0, n));
}

void EraseAll(std::string& s, const std::string& what) {
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at)) s.erase(at, what.size());
}

}  // namespace

std::string ShortName(const std::string& name) {
  std::string s(WithoutParameters(name));
  if (s.rfind("void ", 0) == 0) s.erase(0, 5);
  EraseAll(s, "at::native::");
  EraseAll(s, "(anonymous namespace)::");
  if (s.rfind(kBackwardNodePrefix, 0) == 0) s = "evaluate_function: " + s.substr(kBackwardNodePrefix.size());
  return s;
}

std::string CutPath(const std::string& name) {
  const size_t path = name.find(" /");
  if (path == std::string::npos) return name;
  const size_t last = name.rfind('/');
  const size_t before = last == 0 ? std::string::npos : name.rfind('/', last - 1);
  if (before == std::string::npos || before <= path + 1) return name;
  return name.substr(0, path + 1) + "\xE2\x80\xA6" + name.substr(before);
}

std::string FrameLabel(const std::string& name) { return CutPath(ShortName(name)); }

std::vector<std::vector<std::string>> DistinctNames(const std::vector<std::string>& names, size_t width) {
  const size_t n = names.size();
  std::vector<std::string> text(n);
  for (size_t i = 0; i < n; ++i) text[i] = Columns(names[i]) <= width ? names[i] : ShortName(names[i]);
  // A shortening that makes two rows one keeps both whole.
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return text[a] < text[b]; });
  for (size_t k = 1; k < n; ++k) {
    size_t a = order[k - 1], b = order[k];
    if (text[a] == text[b] && names[a] != names[b]) text[a] = names[a], text[b] = names[b];
  }
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return text[a] < text[b]; });
  // Where each row parts from the row most like it (its neighbours in sorted order).
  std::vector<size_t> parts(n, 0);
  for (size_t k = 1; k < n; ++k) {
    size_t a = order[k - 1], b = order[k], common = CommonPrefix(text[a], text[b]);
    parts[a] = std::max(parts[a], common), parts[b] = std::max(parts[b], common);
  }
  const std::string ellipsis = "\xE2\x80\xA6";
  std::vector<std::string> shown(n);
  for (size_t i = 0; i < n; ++i) {
    const std::string& s = text[i];
    const std::vector<size_t> at = CodePoints(s);
    if (at.size() <= width) {
      shown[i] = s;
    } else if (width < 24 || parts[i] + 8 <= width - 1) {
      shown[i] = Fit(s, width);  // the difference shows before the cut
    } else {
      // Its start (a template's name, where it has one), then from a little before where
      // it parts from its neighbour.
      const size_t angle = s.find('<') == std::string::npos ? at.size() : Columns(s.substr(0, s.find('<') + 1));
      const size_t head = angle + 20 <= width ? angle : std::min<size_t>(16, width / 4);
      const size_t from = std::max(head, parts[i] - std::min<size_t>(parts[i], 6));
      const size_t room = width - head - 1;
      std::string rest = Slice(s, at, from, at.size());
      shown[i] = Slice(s, at, 0, head) + ellipsis + (Columns(rest) <= room ? rest : Fit(rest, room));
    }
  }
  // Rows that still read alike are written whole over several lines.
  std::vector<std::vector<std::string>> out(n);
  std::vector<size_t> by_shown(n);
  std::iota(by_shown.begin(), by_shown.end(), 0);
  std::sort(by_shown.begin(), by_shown.end(), [&](size_t a, size_t b) { return shown[a] < shown[b]; });
  std::vector<bool> wrap(n, false);
  for (size_t k = 1; k < n; ++k) {
    size_t a = by_shown[k - 1], b = by_shown[k];
    if (shown[a] == shown[b] && names[a] != names[b]) wrap[a] = wrap[b] = true;
  }
  for (size_t i = 0; i < n; ++i) {
    if (!wrap[i]) {
      out[i] = {shown[i]};
      continue;
    }
    const std::vector<size_t> at = CodePoints(names[i]);
    for (size_t from = 0; from < at.size(); from += width) out[i].push_back(Slice(names[i], at, from, from + width));
  }
  return out;
}

std::string AlignedText(const std::vector<std::vector<std::string>>& raw, size_t indent) {
  if (raw.empty()) return "";
  // Every cell as a terminal shows it: a name from the trace cannot move the cursor.
  std::vector<std::vector<std::string>> rows = raw;
  for (auto& r : rows) {
    for (std::string& cell : r) cell = VisibleText(cell);
  }
  size_t n = rows[0].size();
  std::vector<size_t> w(n, 0);
  for (const auto& r : rows) {
    for (size_t i = 0; i < n && i < r.size(); ++i) w[i] = std::max(w[i], Columns(r[i]));
  }
  size_t fixed = indent;
  for (size_t i = 1; i < n; ++i) fixed += w[i] + 2;
  w[0] = std::min(w[0], kWidth > fixed + 10 ? kWidth - fixed : 10);
  // The first column names the rows (the heading stays as it is): each row keeps what
  // tells it apart from the others.
  std::vector<std::string> names;
  for (size_t r = 1; r < rows.size(); ++r) names.push_back(rows[r].empty() ? "" : rows[r][0]);
  std::vector<std::vector<std::string>> shown = DistinctNames(names, w[0]);
  std::string out;
  for (size_t r = 0; r < rows.size(); ++r) {
    std::vector<std::string> lines =
        r == 0 ? std::vector<std::string>{Fit(rows[0].empty() ? "" : rows[0][0], w[0])} : shown[r - 1];
    for (size_t k = 0; k + 1 < lines.size(); ++k) out += std::string(indent, ' ') + lines[k] + "\n";
    std::string line(indent, ' ');
    const std::string& first = lines.back();
    line += first + std::string(w[0] - std::min(w[0], Columns(first)), ' ');
    for (size_t i = 1; i < n; ++i) {
      const std::string& cell = i < rows[r].size() ? rows[r][i] : "";
      line += "  " + std::string(w[i] - Columns(cell), ' ') + cell;
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

std::string MarkdownTable(const std::vector<std::vector<std::string>>& rows) {
  if (rows.empty()) return "";
  auto cell = [&](const std::string& s) {
    std::string out;
    for (char c : s) {
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

namespace torch2pprof {

void CheckCsvTable(const std::string& table, const std::vector<std::string>& tables, const std::string& what) {
  // "" names none: the report writes its default.
  if (table.empty() || std::find(tables.begin(), tables.end(), table) != tables.end()) return;
  std::string names;
  for (const std::string& n : tables) names += (names.empty() ? "" : ", ") + n;
  throw Error(Error::Kind::kUsage, "", -1, what + "--table must be one of " + names + " (got '" + table + "')");
}

}  // namespace torch2pprof
