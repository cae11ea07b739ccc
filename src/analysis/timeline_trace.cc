// analyze --timeline (analysis/timeline_trace.h): the events written back as the Chrome
// trace format's complete events, exact to the nanosecond, with the critical path added.
#include "analysis/timeline_trace.h"

#include <algorithm>
#include <cstdlib>

#include "base/magic.h"
#include "base/utf8.h"
#include "model/frame_names.h"

namespace torch2pprof::analysis {

namespace {

constexpr size_t kChunk = 1 << 20;

// Microseconds with three decimals, from integer nanoseconds: the trace's own precision.
void Micros(std::string& out, int64_t ns) {
  if (ns < 0) {
    out += '-';
    ns = -ns;  // traces' times are far from INT64_MIN
  }
  out += std::to_string(ns / 1000);
  const int64_t frac = ns % 1000;
  out += '.';
  out += static_cast<char>('0' + frac / 100);
  out += static_cast<char>('0' + frac / 10 % 10);
  out += static_cast<char>('0' + frac % 10);
}

// A pid or tid as the trace wrote it: a number stays one, anything else a string.
bool Integral(const std::string& s) {
  if (s.empty() || s.size() > 18) return false;
  size_t i = s[0] == '-' ? 1 : 0;
  if (i == s.size()) return false;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
  }
  return true;
}
void Id(std::string& out, const std::string& s) {
  if (Integral(s)) {
    out += s;
  } else {
    AppendJsonString(out, s);
  }
}

void Where(std::string& out, const Lane& l) {
  out += "\"pid\":";
  Id(out, l.pid);
  out += ",\"tid\":";
  Id(out, l.tid);
}

}  // namespace

// Over 100 lines: one streamed document, written top to bottom in the order Chrome's
// trace format reads it (metadata, events, the path's slices and flows).
void WriteTimelineTrace(const Trace& t, const CriticalPaths& paths, const std::string& source,
                        const std::function<void(std::string_view)>& sink) {
  std::string out;
  out.reserve(kChunk + 4096);
  auto flush = [&](bool always) {
    if (always || out.size() >= kChunk) {
      sink(out);
      out.clear();
    }
  };
  out += kTimelineHead;
  out += ",\"source\":";
  AppendJsonString(out, source);
  out += "},\"traceEvents\":[\n";
  // The critical path's process: a number no lane of the trace uses.
  int64_t pid = 0;
  for (const Lane& l : t.lanes) {
    if (Integral(l.pid)) pid = std::max<int64_t>(pid, std::strtoll(l.pid.c_str(), nullptr, 10));
  }
  ++pid;
  const std::string path_pid = std::to_string(pid);
  out += "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":" + path_pid +
         ",\"tid\":0,\"args\":{\"name\":\"critical path\"}},\n"
         "{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":" +
         path_pid + ",\"tid\":0,\"args\":{\"sort_index\":-1}},\n" +
         "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":" + path_pid +
         ",\"tid\":0,\"args\":{\"name\":\"what the step waited on\"}}";
  std::vector<bool> named(t.lanes.size(), false);
  for (size_t i = 0; i < t.lanes.size(); ++i) {
    const Lane& l = t.lanes[i];
    if (!l.thread_name.empty()) {
      out += ",\n{\"ph\":\"M\",\"name\":\"thread_name\",";
      Where(out, l);
      out += ",\"args\":{\"name\":";
      AppendJsonString(out, l.thread_name);
      out += "}}";
    }
    bool first = true;
    for (size_t k = 0; k < i; ++k) first &= t.lanes[k].pid != l.pid;
    if (first && !l.process_name.empty()) {
      out += ",\n{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":";
      Id(out, l.pid);
      out += ",\"tid\":0,\"args\":{\"name\":";
      AppendJsonString(out, l.process_name);
      out += "}}";
    }
  }
  const size_t n = EventCount(t);
  for (size_t e = 0; e < n; ++e) {
    const Interval& iv = EventAt(t, e);
    out += ",\n{\"ph\":\"X\",\"name\":";
    AppendJsonString(out, t.strings.Get(iv.name));
    out += ",\"cat\":";
    AppendJsonString(out, t.strings.Get(iv.cat));
    out += ',';
    Where(out, t.lanes[iv.lane]);
    out += ",\"ts\":";
    Micros(out, iv.start_ns);
    out += ",\"dur\":";
    Micros(out, iv.end_ns - iv.start_ns);
    out += '}';
    flush(false);
  }
  // The critical path: each step's stretches, one slice per run on one event, and a flow
  // where the next runs on another lane.
  uint64_t flow = 0;
  for (size_t k = 0; k < paths.paths.size() && k < paths.steps.size(); ++k) {
    const std::vector<CriticalSegment>& segs = paths.paths[k].segments;
    for (size_t i = 0; i < segs.size();) {
      size_t j = i + 1;
      while (j < segs.size() && segs[j].lane == segs[i].lane && segs[j].event == segs[i].event &&
             segs[j].bound == segs[i].bound && segs[j].start_ns == segs[j - 1].end_ns)
        ++j;
      const CriticalSegment& a = segs[i];
      const int64_t end = segs[j - 1].end_ns;
      out += ",\n{\"ph\":\"X\",\"name\":";
      AppendJsonString(out, a.event == CriticalSegment::kNoEvent
                                ? std::string("(no event open on the thread)")
                                : MakeFrame(FrameSystemName(t.strings.Get(EventAt(t, a.event).name))).name);
      out += ",\"cat\":\"";
      out += kBoundNames[static_cast<int>(a.bound)];
      out += "\",\"pid\":" + path_pid + ",\"tid\":0,\"ts\":";
      Micros(out, a.start_ns);
      out += ",\"dur\":";
      Micros(out, end - a.start_ns);
      out += ",\"args\":{\"step\":";
      AppendJsonString(out, paths.steps[k]);
      out += ",\"bound\":\"";
      out += kBoundWords[static_cast<int>(a.bound)];
      out += "\",\"lane\":";
      const Lane& l = t.lanes[a.lane];
      AppendJsonString(out, l.pid + "/" + l.tid);
      out += "}}";
      // Perfetto binds a flow's ends to the slices open there: none without an event.
      if (j < segs.size() && segs[j].lane != a.lane && a.event != CriticalSegment::kNoEvent &&
          segs[j].event != CriticalSegment::kNoEvent) {
        // Each end on its event's own lane and inside it: the slice Perfetto binds it to.
        const Interval& from = EventAt(t, a.event);
        const Interval& to = EventAt(t, segs[j].event);
        const std::string id = std::to_string(++flow);
        out += ",\n{\"ph\":\"s\",\"name\":\"critical path\",\"cat\":\"critical_path\",\"id\":" + id + ",";
        Where(out, t.lanes[from.lane]);
        out += ",\"ts\":";
        Micros(out, std::clamp(end - 1, from.start_ns, from.end_ns));
        out += "},\n{\"ph\":\"f\",\"bp\":\"e\",\"name\":\"critical path\",\"cat\":\"critical_path\",\"id\":" + id + ",";
        Where(out, t.lanes[to.lane]);
        out += ",\"ts\":";
        Micros(out, std::clamp(segs[j].start_ns, to.start_ns, to.end_ns));
        out += '}';
      }
      i = j;
      flush(false);
    }
  }
  out += "\n]}\n";
  flush(true);
}

}  // namespace torch2pprof::analysis
