#include "report/svg_chart.h"

#include <algorithm>
#include <cmath>

#include "base/utf8.h"
#include "report/format.h"
#include "torch2pprof/report.h"

namespace torch2pprof::report {

namespace {

// One geometry for every chart: a viewBox 1000 wide, the plot inside these margins.
constexpr double kW = 1000, kLeft = 72, kRight = 12, kTop = 14;
constexpr int kMaxTicks = 20;  // an axis never gets more labels than this

std::string N(double v) { return Printf("%.1f", v); }

// A round step for about `ticks` ticks up to max: 1, 2 or 5 times a power of ten of `unit`.
double NiceStep(double max, int ticks) {
  if (max <= 0) return 1;
  double raw = max / ticks, mag = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * mag >= raw) return m * mag;
  }
  return 10 * mag;
}

std::string Svg(double height, const std::string& label, const std::string& body) {
  return "<svg class=\"chart\" viewBox=\"0 0 " + N(kW) + " " + N(height) + "\" role=\"img\" aria-label=\"" +
         Html(label) + "\">" + body + "</svg>\n";
}

std::string Label(double x, double y, const std::string& s, const char* anchor = "end", const char* cls = "tick") {
  return "<text class=\"" + std::string(cls) + "\" x=\"" + N(x) + "\" y=\"" + N(y) + "\" text-anchor=\"" + anchor +
         "\">" + Html(s) + "</text>";
}

// Horizontal grid lines and labels for values 0..max drawn from y0 (bottom) to y1 (top).
std::string YAxis(double max, double y0, double y1, std::string (*label)(double)) {
  std::string out;
  double step = NiceStep(max, 5);
  for (int i = 0; i <= kMaxTicks && i * step <= max * 1.0001; ++i) {
    double v = i * step;
    double y = y0 - (y0 - y1) * (max > 0 ? v / max : 0);
    out += "<line class=\"grid\" x1=\"" + N(kLeft) + "\" x2=\"" + N(kW - kRight) + "\" y1=\"" + N(y) + "\" y2=\"" +
           N(y) + "\"/>";
    out += Label(kLeft - 6, y + 4, label(v));
  }
  return out;
}

std::string DurationLabel(double ns) { return FormatDuration(static_cast<int64_t>(std::llround(ns))); }

// Bytes in the unit of the axis' top value, so that ticks read 0.5 GiB, 1 GiB, 1.5 GiB.
double ByteUnit(double max) {
  double unit = 1;
  while (unit * 1024 <= max && unit < 1024.0 * 1024 * 1024 * 1024) unit *= 1024;
  return unit;
}

}  // namespace

// The HTML tokenizer ends a script element at "</script" and, after "<!--", hunts for
// "<script" and "-->" whatever JSON's quotes say. In JSON these bytes can only be inside
// strings, where \u escapes mean the same to JSON.parse.
std::string ScriptJson(const std::string& json) {
  std::string out;
  out.reserve(json.size() + json.size() / 16);
  for (size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    if (c == '<') {
      out += "\\u003c";
    } else if (c == '>') {
      out += "\\u003e";
    } else if (c == '&') {
      out += "\\u0026";
    } else if (c == '\xe2' && i + 2 < json.size() && json[i + 1] == '\x80' &&
               (json[i + 2] == '\xa8' || json[i + 2] == '\xa9')) {
      out += json[i + 2] == '\xa8' ? "\\u2028" : "\\u2029";  // line ends to older JavaScript
      i += 2;
    } else {
      out += c;
    }
  }
  return out;
}

std::string Html(const std::string& text) {
  const std::string s = VisibleText(text);  // no raw control bytes in the page
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string StackedBars(const std::vector<std::string>& labels, const std::vector<ChartSeries>& series,
                        const std::vector<std::vector<int64_t>>& values) {
  const double height = 300, y0 = 250, y1 = kTop + 24;
  int64_t max = 0;
  for (const auto& bar : values) {
    int64_t sum = 0;
    for (int64_t v : bar) sum += v;
    max = std::max(max, sum);
  }
  double step = NiceStep(static_cast<double>(max), 5);
  double top = std::max(step, std::ceil(static_cast<double>(max) / step) * step);
  std::string body;
  // Legend along the top.
  double lx = kLeft;
  for (const ChartSeries& s : series) {
    body +=
        "<rect x=\"" + N(lx) + "\" y=\"" + N(kTop - 10) + "\" width=\"12\" height=\"12\" fill=\"" + s.color + "\"/>";
    body += Label(lx + 16, kTop, s.name, "start", "legend");
    lx += 24 + 8.0 * static_cast<double>(s.name.size());
  }
  body += YAxis(top, y0, y1, DurationLabel);
  size_t n = labels.size();
  double slot = (kW - kLeft - kRight) / static_cast<double>(std::max<size_t>(n, 1));
  double width = std::clamp(slot * (n > 60 ? 0.9 : 0.7), 1.0, 80.0);
  size_t every = std::max<size_t>(1, (n + 19) / 20);  // at most 20 labels
  for (size_t i = 0; i < n; ++i) {
    int64_t sum = 0;
    for (int64_t v : values[i]) sum += v;
    std::string tip = labels[i] + ": " + FormatDuration(sum);
    for (size_t k = 0; k < series.size(); ++k) {
      if (values[i][k] > 0)
        tip += "\n" + series[k].name + " " + FormatDuration(values[i][k]) + " (" + Percent(values[i][k], sum) + ")";
    }
    double x = kLeft + slot * static_cast<double>(i) + (slot - width) / 2, y = y0;
    body += "<g><title>" + Html(tip) + "</title>";
    for (size_t k = 0; k < series.size(); ++k) {
      double h = (y0 - y1) * static_cast<double>(values[i][k]) / top;
      if (h <= 0) continue;
      y -= h;
      body += "<rect x=\"" + N(x) + "\" y=\"" + N(y) + "\" width=\"" + N(width) + "\" height=\"" + N(h) + "\" fill=\"" +
              series[k].color + "\"/>";
    }
    body += "</g>";
    if (i % every == 0) body += Label(x + width / 2, y0 + 16, labels[i], "middle");
  }
  body += "<line class=\"axis\" x1=\"" + N(kLeft) + "\" x2=\"" + N(kW - kRight) + "\" y1=\"" + N(y0) + "\" y2=\"" +
          N(y0) + "\"/>";
  return Svg(height, "time per step by part", body);
}

std::string ShareBars(const std::vector<ShareBar>& bars) {
  const double row = 30, height = kTop + row * static_cast<double>(bars.size()) + 8;
  const double x0 = 160, x1 = 640;
  std::string body;
  for (size_t i = 0; i < bars.size(); ++i) {
    const ShareBar& b = bars[i];
    double y = kTop + row * static_cast<double>(i);
    double f = b.whole > 0 ? std::clamp(static_cast<double>(b.part) / static_cast<double>(b.whole), 0.0, 1.0) : 0;
    body += Label(x0 - 8, y + 15, b.label);
    body +=
        "<rect class=\"track\" x=\"" + N(x0) + "\" y=\"" + N(y + 2) + "\" width=\"" + N(x1 - x0) + "\" height=\"18\"/>";
    body += "<rect class=\"bar\" x=\"" + N(x0) + "\" y=\"" + N(y + 2) + "\" width=\"" + N((x1 - x0) * f) +
            "\" height=\"18\"><title>" + Html(b.label + ": " + Percent(b.part, b.whole)) + "</title></rect>";
    body += Label(x1 + 8, y + 15, Percent(b.part, b.whole) + (b.note.empty() ? "" : "  " + b.note), "start", "value");
  }
  return Svg(height, "shares", body);
}

namespace {

// The byte scale's grid lines and labels, up to `top`.
template <typename YFn>
std::string ByteGrid(double top, double unit, YFn Y) {
  std::string body;
  const double grid = NiceStep(top / unit, 4) * unit;
  const std::string unit_name = unit >= 1024.0 * 1024 * 1024 * 1024 ? " TiB"
                                : unit >= 1024.0 * 1024 * 1024      ? " GiB"
                                : unit >= 1024.0 * 1024             ? " MiB"
                                : unit >= 1024                      ? " KiB"
                                                                    : " B";
  for (int i = 0; i <= kMaxTicks && i * grid <= top * 1.0001; ++i) {
    const double v = i * grid;
    body += "<line class=\"grid\" x1=\"" + N(kLeft) + "\" x2=\"" + N(kW - kRight) + "\" y1=\"" + N(Y(v)) + "\" y2=\"" +
            N(Y(v)) + "\"/>";
    body += Label(kLeft - 6, Y(v) + 4, Printf("%g", v / unit) + unit_name);
  }
  return body;
}

// Time ticks relative to origin_ns, under the chart at y0.
template <typename XFn>
std::string TimeTicks(int64_t t0, int64_t t1, int64_t origin_ns, double y0, XFn X) {
  std::string body;
  const double tstep = NiceStep(static_cast<double>(t1 - t0), 6);
  // Ticks by index: far from the origin, adding a small step to a large double would
  // not move it.
  const double first = std::ceil(static_cast<double>(t0 - origin_ns) / tstep);
  for (int i = 0; i <= kMaxTicks && (first + i) * tstep <= static_cast<double>(t1 - origin_ns); ++i) {
    const double v = (first + i) * tstep;
    body += Label(X(origin_ns + static_cast<int64_t>(std::llround(v))), y0 + 16, "+" + DurationLabel(v), "middle");
  }
  return body;
}

template <typename XFn, typename YFn>
std::string PeakMark(int64_t peak_ns, int64_t peak, int64_t origin_ns, XFn X, YFn Y) {
  const double px = X(peak_ns), py = Y(static_cast<double>(peak));
  std::string body = "<circle class=\"peak\" cx=\"" + N(px) + "\" cy=\"" + N(py) + "\" r=\"4\"><title>" +
                     Html("peak " + Bytes(peak) + " at +" + FormatDuration(peak_ns - origin_ns)) + "</title></circle>";
  const bool right = px > kW * 0.7;
  body += Label(px + (right ? -8 : 8), std::max(py - 6, kTop + 4),
                "peak " + Bytes(peak) + " at +" + FormatDuration(peak_ns - origin_ns), right ? "end" : "start",
                "peak-label");
  return body;
}

}  // namespace

std::string BytesOverTime(const std::vector<AreaPoint>& points, int64_t origin_ns, int64_t peak_ns, int64_t peak,
                          const std::vector<int64_t>& marks_ns) {
  const double height = 240, y0 = 200, y1 = kTop + 10;
  if (points.empty()) return "";
  int64_t t0 = points.front().start_ns, t1 = std::max(points.back().end_ns, t0 + 1);
  double max = static_cast<double>(std::max<int64_t>(peak, 1));
  double unit = ByteUnit(max), step = NiceStep(max / unit, 4) * unit;
  double top = std::max(step, std::ceil(max / step) * step);
  auto X = [&](int64_t t) {
    return kLeft + (kW - kLeft - kRight) * static_cast<double>(t - t0) / static_cast<double>(t1 - t0);
  };
  auto Y = [&](double v) { return y0 - (y0 - y1) * std::max(0.0, v) / top; };
  std::string body = ByteGrid(top, unit, Y);
  for (int64_t m : marks_ns) {
    if (m < t0 || m > t1) continue;
    body += "<line class=\"mark\" x1=\"" + N(X(m)) + "\" x2=\"" + N(X(m)) + "\" y1=\"" + N(y1) + "\" y2=\"" + N(y0) +
            "\"/>";
  }
  std::string poly = N(X(t0)) + "," + N(y0);
  for (const AreaPoint& p : points) {
    double y = Y(static_cast<double>(p.value));
    poly += " " + N(X(p.start_ns)) + "," + N(y) + " " + N(X(p.end_ns)) + "," + N(y);
  }
  poly += " " + N(X(t1)) + "," + N(y0);
  body += "<polygon class=\"area\" points=\"" + poly + "\"/>";
  body += TimeTicks(t0, t1, origin_ns, y0, X);
  body += PeakMark(peak_ns, peak, origin_ns, X, Y);
  body += "<line class=\"axis\" x1=\"" + N(kLeft) + "\" x2=\"" + N(kW - kRight) + "\" y1=\"" + N(y0) + "\" y2=\"" +
          N(y0) + "\"/>";
  return Svg(height, "allocated bytes over time", body);
}

std::string StackedBytesOverTime(const std::vector<AreaPoint>& spans, const std::vector<StackSeries>& series,
                                 int64_t origin_ns, int64_t peak_ns, int64_t peak) {
  const double height = 300, y0 = 260, y1 = kTop + 10;
  if (spans.empty() || series.empty()) return "";
  const int64_t t0 = spans.front().start_ns, t1 = std::max(spans.back().end_ns, t0 + 1);
  const double max = static_cast<double>(std::max<int64_t>(peak, 1));
  const double unit = ByteUnit(max), step = NiceStep(max / unit, 4) * unit;
  const double top = std::max(step, std::ceil(max / step) * step);
  auto X = [&](int64_t t) {
    return kLeft + (kW - kLeft - kRight) * static_cast<double>(t - t0) / static_cast<double>(t1 - t0);
  };
  auto Y = [&](double v) { return y0 - (y0 - y1) * std::max(0.0, v) / top; };
  std::string body = ByteGrid(top, unit, Y);
  // Each series between the sum of those before it and that sum plus its own: its top
  // edge left to right, its bottom edge back.
  std::vector<int64_t> below(spans.size(), 0);
  for (size_t j = 0; j < series.size(); ++j) {
    const StackSeries& s = series[j];
    std::string points;
    std::vector<std::string> bottom;  // right to left, once the top edge is done
    for (size_t i = 0; i < spans.size(); ++i) {
      const std::string a = N(X(spans[i].start_ns)), b = N(X(spans[i].end_ns));
      const std::string hi = N(Y(static_cast<double>(below[i] + s.values[i])));
      const std::string lo = N(Y(static_cast<double>(below[i])));
      points += (i ? " " : "") + a + "," + hi + " " + b + "," + hi;
      bottom.push_back(b + "," + lo + " " + a + "," + lo);
      below[i] += s.values[i];
    }
    for (auto it = bottom.rbegin(); it != bottom.rend(); ++it) points += " " + *it;
    body += "<polygon class=\"site\" data-i=\"" + std::to_string(j) + "\" style=\"fill:" + s.color + "\" points=\"" +
            points + "\"><title>" + Html(s.title) + "</title></polygon>";
  }
  body += TimeTicks(t0, t1, origin_ns, y0, X);
  body += PeakMark(peak_ns, peak, origin_ns, X, Y);
  body += "<line class=\"axis\" x1=\"" + N(kLeft) + "\" x2=\"" + N(kW - kRight) + "\" y1=\"" + N(y0) + "\" y2=\"" +
          N(y0) + "\"/>";
  return Svg(height, "allocated bytes over time, by site", body);
}

}  // namespace torch2pprof::report
