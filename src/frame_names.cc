#include "frame_names.h"

#include "torch2pprof/trace_model.h"

namespace torch2pprof {
namespace {

bool IsHex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Python paths are long and mostly the same prefix; the readable name keeps what
// follows the last site-packages/ (the module path), the full path stays in filename.
std::string_view ShortPath(std::string_view path) {
  for (std::string_view marker : {"site-packages/", "dist-packages/"}) {
    size_t at = path.rfind(marker);
    if (at != std::string_view::npos) return path.substr(at + marker.size());
  }
  return path;
}

// pprof's symbolizer "simplifies" every function whose name equals its system name
// and looks like demangled C++ (has <>[] or ::): it deletes each balanced (...) and
// <...>. Trace names such as "<built-in method add_ of Tensor object>" would become
// empty, "Memcpy HtoD (Pageable -> Device)" would merge with its Pinned twin, and
// template instantiations of one kernel would merge. So such a frame gets a name
// that differs from its system name, which pprof then shows as it is.
bool LooksLikeCpp(std::string_view s) {
  if (s.find(".<") != std::string_view::npos || s.find("]).") != std::string_view::npos) return false;
  return s.find_first_of("<>[]") != std::string_view::npos || s.find("::") != std::string_view::npos;
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

// "void k<4, F<float> >(int, F<float>)" -> "void k<4, F<float> >": the parameter list of
// a C++ signature, which directly follows an identifier or a template's '>'.
std::string_view WithoutParameters(std::string_view s) {
  if (s.empty() || s.back() != ')') return s;
  int depth = 0;
  for (size_t i = s.size(); i-- > 0;) {
    if (s[i] == ')') {
      ++depth;
    } else if (s[i] == '(' && --depth == 0) {
      if (i == 0) return s;
      char c = s[i - 1];
      bool ident = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '>';
      return ident ? s.substr(0, i) : s;
    }
  }
  return s;
}

std::string ReadableName(const std::string& system_name) {
  if (!LooksLikeCpp(system_name)) return system_name;
  if (RemoveMatching(RemoveMatching(system_name, '(', ')'), '<', '>') == system_name) return system_name;
  std::string_view short_name = WithoutParameters(system_name);
  if (short_name.size() != system_name.size()) return std::string(short_name);
  return system_name + " ";  // any difference stops pprof's rewrite; this one is invisible
}

}  // namespace

std::string FrameSystemName(std::string_view name) {
  if (StepNumber(name) >= 0) return "ProfilerStep";
  std::string out;
  size_t from = 0;
  for (;;) {
    size_t at = name.find(" at 0x", from);
    size_t digits = at == std::string_view::npos ? 0 : at + 6;
    size_t stop = digits;
    while (stop < name.size() && IsHex(name[stop])) ++stop;
    if (at == std::string_view::npos) break;
    if (stop == digits) {  // " at 0x" without hex digits is not an address
      out.append(name.substr(from, digits - from));
      from = digits;
      continue;
    }
    out.append(name.substr(from, at - from));
    from = stop;
  }
  out.append(name.substr(from));
  return out;
}

Frame MakeFrame(std::string_view system_name) {
  Frame f;
  f.system_name = std::string(system_name);
  f.name = ReadableName(f.system_name);
  // Kineto's Python frames: "path/to/file.py(123): func". The path may itself
  // contain ".py(", so the last match that parses wins, as a greedy regex would.
  if (system_name.find('\n') != std::string_view::npos) return f;
  size_t at = system_name.size();
  while (at > 0) {
    at = system_name.rfind(".py(", at - 1);
    if (at == std::string_view::npos) break;
    size_t d = at + 4, e = d;
    while (e < system_name.size() && IsDigit(system_name[e])) ++e;
    if (e == d || e - d > 18 || system_name.substr(e, 3) != "): ") continue;
    std::string_view path = system_name.substr(0, at + 3);
    std::string_view func = system_name.substr(e + 3);
    f.filename = std::string(path);
    f.line = std::stoll(std::string(system_name.substr(d, e - d)));
    f.name = std::string(func) + " " + std::string(ShortPath(path)) + ":" + std::to_string(f.line);
    if (f.name == f.system_name) f.name += " ";
    break;
  }
  return f;
}

namespace {

// Built-in calls that block: their names as Kineto writes them.
constexpr std::string_view kWaitBuiltins[] = {
    "<built-in method acquire of _thread.lock object>",
    "<built-in method acquire of _thread.RLock object>",
    "<built-in method poll of select.poll object>",
    "<built-in method poll of select.epoll object>",
    "<built-in method poll of select.devpoll object>",
    "<built-in method control of select.kqueue object>",
    "<built-in function select>",
    "<built-in function sleep>",
    "<built-in method get of _queue.SimpleQueue object>",
    "<built-in method run_backward of torch._C._EngineBase object>",
    "Activity Buffer Request",  // not a wait: the profiler's own overhead (category overhead), no work either
};

// Python functions that block, by the end of their file's path and their name.
struct PythonWait {
  std::string_view file_suffix, function;
};
constexpr PythonWait kWaitFunctions[] = {
    {"/threading.py", "wait"},                   // Condition.wait, Event.wait
    {"/queue.py", "get"},                        // queue.Queue.get
    {"/selectors.py", "select"},                 // selectors.*Selector.select
    {"/multiprocessing/connection.py", "wait"},  // multiprocessing.connection.wait
    {"/multiprocessing/connection.py", "_poll"},
    {"/multiprocessing/connection.py", "poll"},
};

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace

bool IsBlockingWait(const Frame& f) {
  if (!f.filename.empty()) {
    std::string_view system = f.system_name;
    size_t at = system.find("): ", f.filename.size());
    if (at == std::string_view::npos) return false;
    std::string_view function = system.substr(at + 3);
    std::string path = "/" + f.filename;  // a bare "threading.py" matches "/threading.py"
    for (const PythonWait& w : kWaitFunctions) {
      if (function == w.function && EndsWith(path, w.file_suffix)) return true;
    }
    return false;
  }
  for (std::string_view w : kWaitBuiltins) {
    if (f.system_name == w) return true;
  }
  return false;
}

std::string BackwardFrameName(std::string_view root) {
  constexpr std::string_view kWrapper = "autograd::engine::evaluate_function: ";
  if (root.substr(0, kWrapper.size()) == kWrapper) root.remove_prefix(kWrapper.size());
  return "[backward] " + std::string(root);
}

}  // namespace torch2pprof
