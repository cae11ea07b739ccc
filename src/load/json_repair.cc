#include "load/json_repair.h"

#include <cctype>
#include <cstdio>
#include <cstring>

#include "base/utf8.h"

namespace torch2pprof {

namespace {

bool IsJsonNumber(std::string_view t) {
  size_t i = 0, n = t.size();
  if (i < n && t[i] == '-') ++i;
  size_t d = i;
  while (i < n && t[i] >= '0' && t[i] <= '9') ++i;
  if (i == d) return false;
  if (i < n && t[i] == '.') {
    size_t f = ++i;
    while (i < n && t[i] >= '0' && t[i] <= '9') ++i;
    if (i == f) return false;
  }
  if (i < n && (t[i] == 'e' || t[i] == 'E')) {
    ++i;
    if (i < n && (t[i] == '+' || t[i] == '-')) ++i;
    size_t e = i;
    while (i < n && t[i] >= '0' && t[i] <= '9') ++i;
    if (i == e) return false;
  }
  return i == n;
}

}  // namespace

std::string RepairJson(std::string_view in) {
  std::string out;
  out.reserve(in.size() + 16);
  bool in_string = false;
  auto is_hex = [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; };
  for (size_t i = 0; i < in.size();) {
    unsigned char c = static_cast<unsigned char>(in[i]);
    if (c >= 0x80) {
      size_t len = Utf8SequenceAt(in, i);
      out += len ? std::string(in.substr(i, len)) : std::string("\xEF\xBF\xBD");  // U+FFFD
      i += len ? len : 1;
    } else if (in_string) {
      if (c == '\\') {
        char next = i + 1 < in.size() ? in[i + 1] : 0;
        if (next && std::strchr("\"\\/bfnrt", next)) {
          out.append(in.substr(i, 2));
          i += 2;
        } else if (next == 'u' && i + 5 < in.size() && is_hex(in[i + 2]) && is_hex(in[i + 3]) && is_hex(in[i + 4]) &&
                   is_hex(in[i + 5])) {
          out.append(in.substr(i, 6));
          i += 6;
        } else {
          out += "\\\\";  // a lone backslash: C:\Users
          ++i;
        }
      } else if (c == '"') {
        // A closing quote is followed by , : } or ]; any other is part of the text.
        size_t j = i + 1;
        while (j < in.size() && std::isspace(static_cast<unsigned char>(in[j]))) ++j;
        bool closes = j >= in.size() || std::strchr(",:}]", in[j]);
        out += closes ? "\"" : "\\\"";
        in_string = !closes;
        ++i;
      } else if (c < 0x20) {
        char b[8];
        std::snprintf(b, sizeof b, "\\u%04x", c);
        out += b;
        ++i;
      } else {
        out += static_cast<char>(c);
        ++i;
      }
    } else if (c == '"') {
      in_string = true;
      out += '"';
      ++i;
    } else if (std::strchr(",:{}[] \t\r\n", static_cast<char>(c))) {
      out += static_cast<char>(c);
      ++i;
    } else {
      // A bare token: numbers and JSON's literals stay; N/A, NaN, None... become null.
      size_t j = i;
      while (j < in.size() && !std::strchr(",:{}[]\" \t\r\n", in[j])) ++j;
      std::string_view token = in.substr(i, j - i);
      bool keep = IsJsonNumber(token) || token == "true" || token == "false" || token == "null";
      out += keep ? std::string(token) : std::string("null");
      i = j;
    }
  }
  return out;
}

}  // namespace torch2pprof
