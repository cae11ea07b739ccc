// How numbers and text are written in reports: exact decimal microseconds for scripts,
// short units for people, UTF-8 aware widths, and a small JSON writer that keeps
// numbers as exact text.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace torch2pprof::report {

inline constexpr size_t kWidth = 120;  // text reports fit in this many columns

std::string Printf(const char* fmt, double v);
std::string Count(uint64_t n);  // 12,345
// "1 CPU thread", "3 device streams": a count and its noun, plural but for one.
std::string Counted(uint64_t n, const std::string& singular, const std::string& plural);
// A device stream as people read it: "stream 7" from torch 2's tid "7" and torch 1.x's "stream 7".
std::string StreamName(const std::string& stream);
std::string Percent(int64_t part, int64_t whole);         // "12.3%", "-" when whole is 0
std::string PercentOf(double fraction);                   // 0.123 -> "12.3%"
std::string Bytes(int64_t b);                             // "1.50 MiB"
std::string SignedBytes(int64_t b);                       // "+1.50 MiB"
std::string SignedDuration(int64_t ns);                   // "+1.20ms", "-850ns"
size_t Columns(const std::string& s);                     // code points, not bytes
std::string Fit(const std::string& s, size_t width);      // cut at the end with "…"
std::string FitLeft(const std::string& s, size_t width);  // cut at the start: keeps a path's file name
// Words wrapped at kWidth columns; the first line starts with `first`, the others with `rest`.
std::string Wrap(const std::string& text, const std::string& first, const std::string& rest);
std::string WallClock(int64_t ns);  // "2026-01-02 03:04:05.678901 UTC", "" when 0
// A text report's section heading: a blank line, the title, a rule as wide as it.
std::string Section(const std::string& title);

// JSON written by hand so that numbers are exact decimal text.
class Json {
 public:
  std::string out;
  void Open(char c);
  void Close(char c);
  void Key(const std::string& k);
  void String(const std::string& s);
  void Raw(const std::string& number);
  void Int(int64_t v) { Raw(std::to_string(v)); }
  void Micros(int64_t ns);
  void Field(const std::string& k, const std::string& v) { Key(k), String(v); }
  void FieldInt(const std::string& k, int64_t v) { Key(k), Int(v); }
  void FieldMicros(const std::string& k, int64_t ns) { Key(k), Micros(ns); }

 private:
  void Newline();
  void Sep();
  void Str(const std::string& s);
  std::vector<bool> first_;
  bool after_key_ = false;
};

// A CSV field as written: quoted where it holds a comma, quote or line break (RFC 4180).
std::string CsvField(const std::string& s);
// A text field from the trace: control characters visible (VisibleText), and a leading
// =, +, - or @ behind a ' so that no spreadsheet runs it as a formula.
std::string CsvText(const std::string& s);
// A whole report for a terminal: every control character but the line breaks visible.
std::string VisibleLines(const std::string& text);
std::string CsvLine(const std::vector<std::string>& fields);

}  // namespace torch2pprof::report
