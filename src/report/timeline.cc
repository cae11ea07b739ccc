// Analysis::timelines as the HTML report's data (report/timeline.h).
#include "report/timeline.h"

#include <iterator>

#include "report/format.h"
#include "report/table.h"

namespace torch2pprof {

namespace {

std::string Quoted(const std::string& s) {
  report::Json j;
  j.String(s);
  return j.out;
}

void Strings(std::string& out, const char* key, const std::vector<std::string>& v) {
  out += std::string("\"") + key + "\":[";
  for (size_t i = 0; i < v.size(); ++i) out += (i ? "," : "") + Quoted(v[i]);
  out += "],";
}

void Append(std::string& out, int64_t v) {
  out += std::to_string(v);
  out += ',';
}

}  // namespace

std::string TimelineJson(const Analysis& a) {
  std::string out = "{";
  Strings(out, "bounds", std::vector<std::string>(std::begin(kBoundWords), std::end(kBoundWords)));
  Strings(out, "causes", std::vector<std::string>(std::begin(kIdleCauseNames), std::end(kIdleCauseNames)));
  out += "\"analysed\":" + std::to_string(a.steps.size()) + ",\"steps\":[";
  for (size_t k = 0; k < a.timelines.size(); ++k) {
    const StepTimeline& s = a.timelines[k];
    out += (k ? ",{" : "{") + std::string("\"step\":") + Quoted(s.step) + ",\"start\":" + std::to_string(s.start_ns) +
           ",\"length\":" + std::to_string(s.length_ns) + ",\"events\":" + std::to_string(s.events) +
           ",\"merged\":" + std::to_string(s.merged) + ",\"left_out\":" + std::to_string(s.lanes_left_out) +
           ",\"lanes\":[";
    for (size_t i = 0; i < s.lanes.size(); ++i) {
      out += (i ? ",[" : "[") + Quoted(s.lanes[i].name) + "," + (s.lanes[i].device ? "1" : "0") + "," +
             std::to_string(s.lanes[i].depth) + "]";
    }
    out += "],";
    Strings(out, "names", s.names);
    // The label each name is drawn with, as the tables write it; "" where it is the name.
    std::vector<std::string> labels;
    for (const std::string& n : s.names) {
      std::string l = report::FrameLabel(n);
      labels.push_back(l == n ? std::string() : std::move(l));
    }
    Strings(out, "labels", labels);
    auto spans = [&](const char* key, const std::vector<TimelineSpan>& v, bool counted) {
      out += std::string("\"") + key + "\":[";
      for (const TimelineSpan& x : v) {
        Append(out, x.lane), Append(out, x.start_ns), Append(out, x.end_ns), Append(out, x.kind), Append(out, x.name);
        if (counted) Append(out, x.count);
      }
      if (!v.empty()) out.pop_back();
      out += "]";
    };
    out += "\"bars\":[";
    for (const TimelineBar& b : s.bars) {
      Append(out, b.lane), Append(out, b.depth), Append(out, b.start_ns), Append(out, b.end_ns), Append(out, b.name);
      Append(out, b.count);
    }
    if (!s.bars.empty()) out.pop_back();
    out += "],";
    spans("critical", s.critical, true);
    out += ",";
    spans("gaps", s.gaps, false);
    out += "}";
  }
  return out + "]}";
}

}  // namespace torch2pprof
