#include "base/utf8.h"

#include <cstdio>

namespace torch2pprof {

size_t Utf8SequenceAt(std::string_view s, size_t i) {
  const size_t n = s.size();
  auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  auto cont = [&](size_t k) { return k < n && (byte(k) & 0xC0) == 0x80; };
  unsigned char c = byte(i);
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF && cont(i + 1)) return 2;
  if (c >= 0xE0 && c <= 0xEF && cont(i + 1) && cont(i + 2)) {
    unsigned char c1 = byte(i + 1);
    return (c == 0xE0 && c1 < 0xA0) || (c == 0xED && c1 > 0x9F) ? 0 : 3;  // overlong, surrogates
  }
  if (c >= 0xF0 && c <= 0xF4 && cont(i + 1) && cont(i + 2) && cont(i + 3)) {
    unsigned char c1 = byte(i + 1);
    return (c == 0xF0 && c1 < 0x90) || (c == 0xF4 && c1 > 0x8F) ? 0 : 4;
  }
  return 0;
}

std::string VisibleText(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  char b[8];
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    size_t len = Utf8SequenceAt(s, i);
    if (len == 0 || c < 0x20 || c == 0x7F) {
      std::snprintf(b, sizeof b, "\\x%02x", c);  // a control character, or a byte of no character
      out += b;
      ++i;
    } else if (len == 2 && c == 0xC2 && static_cast<unsigned char>(s[i + 1]) < 0xA0) {
      std::snprintf(b, sizeof b, "\\u%04x", static_cast<unsigned char>(s[i + 1]));  // C1: U+0080..U+009F
      out += b;
      i += 2;
    } else {
      out.append(s, i, len);
      i += len;
    }
  }
  return out;
}

std::string ValidUtf8(const std::string& s) {
  std::string out;
  bool dirty = false;
  for (size_t i = 0; i < s.size();) {
    const size_t len = Utf8SequenceAt(s, i);
    if (len == 0) {
      if (!dirty) out.assign(s, 0, i);
      dirty = true;
      out += "\xEF\xBF\xBD";
      ++i;
      continue;
    }
    if (dirty) out.append(s, i, len);
    i += len;
  }
  return dirty ? out : s;
}

void AppendJsonString(std::string& out, std::string_view s) {
  static const char kHex[] = "0123456789abcdef";
  auto escaped = [&](unsigned char c) {
    out += "\\u00";
    out += kHex[c >> 4];
    out += kHex[c & 15];
  };
  out += '"';
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7F) {  // the common case: printable ASCII
      if (c == '"' || c == '\\') out += '\\';
      out += static_cast<char>(c);
      ++i;
      continue;
    }
    const size_t len = Utf8SequenceAt(s, i);
    if (len == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else if (len == 1) {
      escaped(c);  // C0 or DEL
      ++i;
    } else if (len == 2 && c == 0xC2 && static_cast<unsigned char>(s[i + 1]) < 0xA0) {
      escaped(static_cast<unsigned char>(s[i + 1]));  // C1: U+0080..U+009F
      i += 2;
    } else {
      out.append(s, i, len);
      i += len;
    }
  }
  out += '"';
}

std::string CutText(std::string_view s, size_t bytes) {
  if (s.size() <= bytes) return std::string(s);
  size_t cut = bytes;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  return std::string(s.substr(0, cut)) + "\xE2\x80\xA6";
}

}  // namespace torch2pprof
