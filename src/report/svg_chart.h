// The HTML report's charts, drawn as inline SVG: no script, no library, no request to
// any address. Each returns one <svg> element that scales to the page's width.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace torch2pprof::report {

// Text for HTML content and attribute values: & < > " ' escaped.
std::string Html(const std::string& s);
// JSON for a <script type="application/json"> element: < > & and U+2028/U+2029 as \u
// escapes, so no name a trace holds ("</script>", "<!--<script>") can end or reshape it.
std::string ScriptJson(const std::string& json);

struct ChartSeries {
  std::string name;
  std::string color;  // CSS color
};

// Vertical bars, one per label, each the stack of its values (nanoseconds) in series
// order. A bar's tooltip lists every part with its share of the bar.
std::string StackedBars(const std::vector<std::string>& labels, const std::vector<ChartSeries>& series,
                        const std::vector<std::vector<int64_t>>& values);

// Horizontal bars of part / whole, one per label, with the share written beside each.
struct ShareBar {
  std::string label;
  int64_t part = 0, whole = 0;
  std::string note;  // after the share: "12.3ms of 45.6ms"
};
std::string ShareBars(const std::vector<ShareBar>& bars);

// A step-shaped area of bytes over time: per stretch [start, end) its highest level.
// Times are drawn relative to origin_ns; marks are vertical lines (step starts) and
// the peak gets a dot and a label.
struct AreaPoint {
  int64_t start_ns = 0, end_ns = 0, value = 0;
};
std::string BytesOverTime(const std::vector<AreaPoint>& points, int64_t origin_ns, int64_t peak_ns, int64_t peak,
                          const std::vector<int64_t>& marks_ns);

// Several series stacked over the same spans (the first at the bottom), each a polygon
// with class "site" and data-i its index, for the page's script to make clickable.
struct StackSeries {
  std::string color;            // CSS
  std::string title;            // its tooltip
  std::vector<int64_t> values;  // parallel to the spans
};
std::string StackedBytesOverTime(const std::vector<AreaPoint>& spans, const std::vector<StackSeries>& series,
                                 int64_t origin_ns, int64_t peak_ns, int64_t peak);

}  // namespace torch2pprof::report
