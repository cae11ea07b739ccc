#include "utf8.h"

namespace torch2pprof {

std::string ValidUtf8(const std::string& s) {
  size_t i = 0, n = s.size();
  auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  auto cont = [&](size_t k) { return k < n && (byte(k) & 0xC0) == 0x80; };
  std::string out;
  bool dirty = false;
  while (i < n) {
    unsigned char c = byte(i);
    size_t len = 0;
    if (c < 0x80) {
      len = 1;
    } else if (c >= 0xC2 && c <= 0xDF && cont(i + 1)) {
      len = 2;
    } else if (c >= 0xE0 && c <= 0xEF && cont(i + 1) && cont(i + 2)) {
      unsigned char c1 = byte(i + 1);
      if (!((c == 0xE0 && c1 < 0xA0) || (c == 0xED && c1 > 0x9F))) len = 3;  // overlong, surrogates
    } else if (c >= 0xF0 && c <= 0xF4 && cont(i + 1) && cont(i + 2) && cont(i + 3)) {
      unsigned char c1 = byte(i + 1);
      if (!((c == 0xF0 && c1 < 0x90) || (c == 0xF4 && c1 > 0x8F))) len = 4;
    }
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

}  // namespace torch2pprof
