#include "report/format.h"

#include <cinttypes>
#include <cstdio>
#include <ctime>

#include "base/utf8.h"
#include "torch2pprof/report.h"

namespace torch2pprof {

std::string FormatMicros(int64_t ns) {
  bool neg = ns < 0;
  uint64_t v = neg ? 0 - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  std::string s = std::to_string(v / 1000);
  uint64_t frac = v % 1000;
  if (frac) {
    char b[8];
    std::snprintf(b, sizeof b, ".%03" PRIu64, frac);
    std::string f = b;
    while (f.back() == '0') f.pop_back();
    s += f;
  }
  return (neg ? "-" : "") + s;
}

std::string FormatDuration(int64_t ns) {
  double v = static_cast<double>(ns);
  double a = v < 0 ? -v : v;
  if (a < 1e3) return std::to_string(ns) + "ns";
  if (a < 1e6) return report::Printf(a < 1e4 ? "%.2fus" : a < 1e5 ? "%.1fus" : "%.0fus", v / 1e3);
  if (a < 1e9) return report::Printf(a < 1e7 ? "%.2fms" : a < 1e8 ? "%.1fms" : "%.0fms", v / 1e6);
  return report::Printf(a < 1e10 ? "%.3fs" : "%.2fs", v / 1e9);
}

namespace report {

std::string Printf(const char* fmt, double v) {
  char b[64];
  std::snprintf(b, sizeof b, fmt, v);
  return b;
}

std::string Count(uint64_t n) { return FormatCount(n); }

std::string Counted(uint64_t n, const std::string& singular, const std::string& plural) {
  return Count(n) + " " + (n == 1 ? singular : plural);
}

std::string StreamName(const std::string& stream) {
  return stream.rfind("stream ", 0) == 0 ? stream : "stream " + stream;
}

}  // namespace report

std::string FormatCount(uint64_t n) {
  std::string s = std::to_string(n), out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i && (s.size() - i) % 3 == 0) out += ',';
    out += s[i];
  }
  return out;
}

namespace report {

std::string Percent(int64_t part, int64_t whole) {
  return whole > 0 ? Printf("%.1f%%", 100.0 * static_cast<double>(part) / static_cast<double>(whole)) : "-";
}

std::string PercentOf(double fraction) { return Printf("%.1f%%", 100.0 * fraction); }

std::string Bytes(int64_t b) { return FormatBytes(b); }

}  // namespace report

std::string FormatBytes(int64_t b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(b < 0 ? -b : b);
  int u = 0;
  while (v >= 1024 && u < 4) v /= 1024, ++u;
  return (b < 0 ? "-" : "") + (u == 0 ? std::to_string(b < 0 ? -b : b) + " B" : report::Printf("%.2f ", v) + units[u]);
}

namespace report {

size_t Columns(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

std::string Section(const std::string& title) { return "\n" + title + "\n" + std::string(Columns(title), '-') + "\n"; }

std::string Fit(const std::string& s, size_t width) {
  if (Columns(s) <= width) return s;
  std::string out;
  size_t cols = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if ((c & 0xC0) != 0x80 && ++cols > width - 1) break;
    out += s[i];
  }
  return out + "\xE2\x80\xA6";  // …
}

// Keeps the end (a path's file name) and elides the start.
std::string FitLeft(const std::string& s, size_t width) {
  if (Columns(s) <= width) return s;
  size_t drop = Columns(s) - (width - 1), i = 0;
  for (size_t cols = 0; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80 && cols++ == drop) break;
  }
  return "\xE2\x80\xA6" + s.substr(i);
}

std::string SignedBytes(int64_t b) { return (b > 0 ? "+" : "") + Bytes(b); }

std::string SignedDuration(int64_t ns) { return (ns > 0 ? "+" : "") + FormatDuration(ns); }

// Words wrapped at kWidth columns; the first line starts with `first`, the others with `rest`.
std::string Wrap(const std::string& raw, const std::string& first, const std::string& rest) {
  const std::string text = VisibleText(raw);
  std::string out, line = first;
  size_t pos = 0;
  bool empty = true;
  while (pos < text.size()) {
    size_t sp = text.find(' ', pos);
    std::string word = text.substr(pos, sp == std::string::npos ? std::string::npos : sp - pos);
    pos = sp == std::string::npos ? text.size() : sp + 1;
    if (!empty && Columns(line) + 1 + Columns(word) > kWidth) {
      out += line + "\n";
      line = rest;
      empty = true;
    }
    line += (empty ? "" : " ") + word;
    empty = false;
  }
  return out + line + "\n";
}

std::string WallClock(int64_t ns) {
  if (ns <= 0) return "";
  std::time_t secs = static_cast<std::time_t>(ns / 1000000000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char b[64];
  std::strftime(b, sizeof b, "%Y-%m-%d %H:%M:%S", &tm);
  return std::string(b) + Printf(".%06.0f UTC", static_cast<double>((ns % 1000000000) / 1000));
}

void Json::Open(char c) {
  Sep();
  out += c;
  first_.push_back(true);
}

void Json::Close(char c) {
  bool empty = first_.back();
  first_.pop_back();
  if (!empty) Newline();
  out += c;
}

void Json::Key(const std::string& k) {
  Sep();
  Str(k);
  out += ": ";
  after_key_ = true;
}

void Json::String(const std::string& s) {
  Sep();
  Str(s);
}

void Json::Raw(const std::string& number) {
  Sep();
  out += number;
}

void Json::Micros(int64_t ns) { Raw(FormatMicros(ns)); }

void Json::Newline() { out += "\n" + std::string(2 * first_.size(), ' '); }

void Json::Sep() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (first_.empty()) return;
  if (!first_.back()) out += ",";
  first_.back() = false;
  Newline();
}

void Json::Str(const std::string& text) { AppendJsonString(out, text); }

std::string CsvText(const std::string& text) {
  std::string s = VisibleText(text);
  // A spreadsheet runs a cell that starts with one of these as a formula (=HYPERLINK(...),
  // +cmd|...): a leading ' makes it text, as OWASP recommends; numbers never get one.
  if (!s.empty() && (s[0] == '=' || s[0] == '+' || s[0] == '-' || s[0] == '@')) return CsvField("'" + s);
  return CsvField(s);
}

std::string CsvField(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos && (s.empty() || s[0] != '\'')) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string VisibleLines(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (size_t at = 0; at < text.size();) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    out += VisibleText(text.substr(at, end - at));
    if (end < text.size()) out += '\n';
    at = end + 1;
  }
  return out;
}

std::string CsvLine(const std::vector<std::string>& fields) {
  std::string line;
  for (size_t i = 0; i < fields.size(); ++i) line += (i ? "," : "") + CsvField(fields[i]);
  return line + "\n";
}

}  // namespace report
}  // namespace torch2pprof
