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

int PickleProtocol(std::string_view b) {
  if (b.size() >= 2 && static_cast<unsigned char>(b[0]) == 0x80) return static_cast<unsigned char>(b[1]);
  if (b.size() < 3) return -1;
  // Protocol 0: MARK, DICT or LIST, PUT as text ("(dp0\n"); protocol 1: EMPTY_DICT or
  // EMPTY_LIST, then BINPUT or MARK ("}q\0(").
  if (b[0] == '(' && (b[1] == 'd' || b[1] == 'l') && b[2] == 'p') return 0;
  if ((b[0] == '}' || b[0] == ']') && (b[1] == 'q' || b[1] == '(' || b[1] == 'r')) return 1;
  return -1;
}

bool StartsLikeKeyAverages(std::string_view b) {
  size_t i = SkipSpace(b, 0);
  if (i == b.size() || b[i] != '[') return false;
  i = SkipSpace(b, i + 1);
  if (i == b.size() || b[i] != '{') return false;
  // The first object, as far as the head holds it (a row is a few hundred bytes).
  const size_t end = b.find('}', i);
  const std::string_view row = b.substr(i, end == std::string_view::npos ? std::string_view::npos : end - i);
  auto has = [&](std::string_view key) { return row.find(key) != std::string_view::npos; };
  return has("\"count\"") && (has("\"self_cpu_us\"") || has("\"self_cpu_time_total\"")) && !has("\"ph\"");
}

}  // namespace torch2pprof
