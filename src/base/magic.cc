#include "base/magic.h"

#include <cstddef>
#include <string>

namespace torch2pprof {
namespace {

bool IsSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

size_t SkipSpace(std::string_view b, size_t i) {
  while (i < b.size() && IsSpace(b[i])) ++i;
  return i;
}

}  // namespace

bool StartsLikeProfile(std::string_view b) {
  if (b.size() < 3 || b[0] != 0x0a) return false;
  const auto length = static_cast<unsigned char>(b[1]);
  if (length == 0 || length >= 0x80 || length + 2u > b.size()) return false;
  size_t at = 2, end = 2 + length;
  while (at < end) {
    const auto tag = static_cast<unsigned char>(b[at++]);
    if (tag != 0x08 && tag != 0x10) return false;
    do {
      if (at >= end) return false;
    } while (static_cast<unsigned char>(b[at++]) & 0x80);
  }
  return true;
}

bool StartsLikeSummary(std::string_view b) {
  size_t i = SkipSpace(b, 0);
  if (i == b.size() || b[i] != '{') return false;
  i = SkipSpace(b, i + 1);
  return b.substr(i, sizeof kSummaryMagic + 1) == std::string("\"") + kSummaryMagic + "\"";
}

bool StartsLikeFolded(std::string_view head) {
  if (head.find('\n') == std::string::npos) {
    for (unsigned char c : head) {
      if (c < 0x20) return false;
    }
    return head.find(';') != std::string::npos;
  }
  size_t lines = 0;
  for (size_t at = 0; at < head.size();) {
    size_t end = head.find('\n', at);
    if (end == std::string::npos) break;  // the last line may be cut by the read
    std::string_view line = head.substr(at, end - at);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);  // written on Windows
    size_t space = line.rfind(' ');
    if (space == std::string::npos || space == 0 || space + 1 == line.size()) return false;
    for (size_t i = space + 1; i < line.size(); ++i) {
      if (!(line[i] >= '0' && line[i] <= '9') && !(line[i] == '-' && i == space + 1)) return false;
    }
    ++lines;
    at = end + 1;
  }
  return lines > 0;
}

int PickleProtocol(std::string_view b) {
  if (b.size() >= 2 && static_cast<unsigned char>(b[0]) == 0x80) return static_cast<unsigned char>(b[1]);
  if (b.size() < 3) return -1;
  // Protocol 0: MARK, DICT or LIST, PUT as text ("(dp0\n"); protocol 1: EMPTY_DICT or
  // EMPTY_LIST, then BINPUT or MARK ("}q\0(").
  if (b[0] == '(' && (b[1] == 'd' || b[1] == 'l') && b[2] == 'p') return 0;
  if ((b[0] == '}' || b[0] == ']') && (b[1] == 'q' || b[1] == '(' || b[1] == 'r')) return 1;
  return -1;
}

size_t FirstToken(std::string_view b) { return SkipSpace(b, 0); }

int KeyAveragesVerdict(std::string_view b, bool complete) {
  size_t i = SkipSpace(b, 0);
  if (i == b.size()) return complete ? 0 : -1;
  if (b[i] != '[') return 0;
  // The array's objects, their top-level keys only: strings and nesting are stepped over.
  int rows = 0;
  bool count = false, self_cpu = false, ph = false, in_object = false;
  int depth = 0;  // 1: inside a row object
  for (++i; i < b.size(); ++i) {
    const char c = b[i];
    if (c == '"') {
      const size_t start = ++i;
      while (i < b.size() && b[i] != '"') i += b[i] == '\\' ? 2 : 1;
      if (i >= b.size()) break;
      if (depth == 1) {
        const size_t after = SkipSpace(b, i + 1);
        if (after < b.size() && b[after] == ':') {
          const std::string_view key = b.substr(start, i - start);
          count |= key == "count";
          self_cpu |= key == "self_cpu_us" || key == "self_cpu_time_total";
          ph |= key == "ph";
        }
      }
    } else if (c == '{' || c == '[') {
      if (depth == 0 && c != '{') return 0;  // an element that is no object: no table
      if (depth == 0) in_object = true, count = self_cpu = ph = false;
      ++depth;
    } else if (c == '}' || c == ']') {
      if (depth == 0) return rows > 0 ? 1 : 0;  // the array's end
      if (--depth == 0 && in_object) {
        if (!count || !self_cpu || ph) return 0;
        ++rows, in_object = false;
        if (rows == 3) return 1;
      }
    }
  }
  // The head ended: inside the first object, the keys seen so far decide only at the end.
  if (in_object && rows == 0) {
    if (ph) return 0;
    return complete ? (count && self_cpu ? 1 : 0) : -1;
  }
  return rows > 0 ? 1 : (complete ? 0 : -1);
}

}  // namespace torch2pprof
