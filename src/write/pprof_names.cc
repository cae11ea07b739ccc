#include "write/pprof_names.h"
#include "model/frame_names.h"

namespace torch2pprof {
namespace {

bool LooksLikeCpp(const std::string& s) {
  if (s.find(".<") != std::string::npos || s.find("]).") != std::string::npos) return false;
  return s.find_first_of("<>[]") != std::string::npos || s.find("::") != std::string::npos;
}

std::string RemoveMatching(std::string s, char open, char close) {
  int depth = 0;
  size_t first = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == open) {
      if (++depth == 1) first = i;
    } else if (s[i] == close) {
      if (--depth < 0) return s;
      if (depth == 0) {
        s.erase(first, i + 1 - first);
        i = first - 1;  // wraps to first after ++i; s[first] is the next unseen char
      }
    }
  }
  return s;
}

}  // namespace

std::string PprofFunctionName(const Frame& f) {
  if (f.name != f.system_name || !LooksLikeCpp(f.name)) return f.name;
  if (RemoveMatching(RemoveMatching(f.name, '(', ')'), '<', '>') == f.name) return f.name;
  std::string_view short_name = WithoutParameters(f.name);
  if (short_name.size() != f.name.size()) return std::string(short_name);
  return f.name + " ";  // any difference stops pprof's rewrite; this one is invisible
}

}  // namespace torch2pprof
