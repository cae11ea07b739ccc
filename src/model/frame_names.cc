#include "model/frame_names.h"
#include "base/utf8.h"
#include "torch2pprof/stages/trace_model.h"

namespace torch2pprof {
namespace {

bool IsHex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

namespace {

// The end of `path` within `bytes`: from the first '/' in its last bytes, else from a
// character's start.
std::string_view Tail(std::string_view path, size_t bytes) {
  if (path.size() <= bytes) return path;
  std::string_view tail = path.substr(path.size() - bytes);
  const size_t slash = tail.find('/');
  if (slash != std::string_view::npos && slash + 1 < tail.size()) return tail.substr(slash + 1);
  size_t i = 0;
  while (i < tail.size() && (static_cast<unsigned char>(tail[i]) & 0xC0) == 0x80) ++i;
  return tail.substr(i);
}

}  // namespace

std::string_view ShortPath(std::string_view path) {
  // A marker further back than the name keeps gives the same tail as none: only the end
  // is searched, so a long path costs its name's length, not its own.
  const size_t window = kNamePathBytes + 16;
  const size_t from = path.size() > window ? path.size() - window : 0;
  const std::string_view end = path.substr(from);
  for (std::string_view marker : {"site-packages/", "dist-packages/"}) {
    size_t at = end.rfind(marker);
    if (at != std::string_view::npos) return Tail(end.substr(at + marker.size()), kNamePathBytes);
  }
  return Tail(path, kNamePathBytes);
}

std::string_view BoundedPath(std::string_view path) { return Tail(path, kFilePathBytes); }

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

Frame MakeFrame(std::string_view event_name) {
  // Control characters are shown, never sent raw: every output reads these names.
  const std::string visible = VisibleText(std::string(event_name));
  std::string_view system_name = visible;
  Frame f;
  f.system_name = visible;
  f.name = f.function = f.system_name;
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
    f.function = std::string(system_name.substr(e + 3));
    f.filename = std::string(BoundedPath(path));
    f.line = std::stoll(std::string(system_name.substr(d, e - d)));
    f.name = f.function + " " + std::string(ShortPath(path)) + ":" + std::to_string(f.line);
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
    kSleepFrame,
    "<built-in method get of _queue.SimpleQueue object>",
    kRunBackwardFrame,
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
    std::string path = "/" + f.filename;  // a bare "threading.py" matches "/threading.py"
    for (const PythonWait& w : kWaitFunctions) {
      if (f.function == w.function && EndsWith(path, w.file_suffix)) return true;
    }
    return false;
  }
  for (std::string_view w : kWaitBuiltins) {
    if (f.system_name == w) return true;
  }
  return false;
}

bool IsBlockingWaitEvent(std::string_view event_name) { return IsBlockingWait(MakeFrame(FrameSystemName(event_name))); }

std::string BackwardFrameName(std::string_view root) {
  if (root.substr(0, kBackwardNodePrefix.size()) == kBackwardNodePrefix) root.remove_prefix(kBackwardNodePrefix.size());
  return "[backward] " + std::string(root);
}

}  // namespace torch2pprof
