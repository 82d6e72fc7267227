#include "svg_chart.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "summary.hpp"
#include "human_text.hpp"
#include "printable.hpp"

namespace ddp::monitor {
namespace {

constexpr double kWidth = kChartWidth, kHeight = kChartHeight;
constexpr double kLeft = kPlotLeft, kRight = kPlotRight, kTop = kPlotTop, kBottom = kPlotBottom;

// Tableau's ten colours without its red and orange, which mark idle GPUs and slow nodes.
const char* const kPalette[] = {"#1f77b4", "#2ca02c", "#9467bd", "#8c564b",
                                "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
constexpr const char* kIdleColour = "#d62728";
constexpr const char* kSlowColour = "#ff7f0e";
constexpr const char* kWorstColour = "#444444";

// Coordinates with one decimal: enough for a 960-wide view box, and short.
std::string coord(double v) {
  std::string s = plan::fixed_text(v, 1);
  if (s.size() > 2 && s.compare(s.size() - 2, 2, ".0") == 0) s.resize(s.size() - 2);
  return s;
}

double x_of(const TimeAxis& axis, std::size_t bin) {
  const double span = std::max(axis.span, axis.bin_seconds);
  return kLeft + (kRight - kLeft) * std::min(1.0, axis.bin_middle(bin) / span);
}

double y_of(double value, double y_max) {
  return kBottom - (kBottom - kTop) * std::clamp(value / y_max, 0.0, 1.0);
}

// A line through the bins that have a value, broken where one has none; a lone point is drawn
// as a dot (a zero-length segment with round caps).
std::string line_path(const Chart& c, const std::vector<float>& values) {
  std::string d;
  bool open = false;
  for (std::size_t b = 0; b < values.size(); ++b) {
    if (!present(values[b])) {
      open = false;
      continue;
    }
    const bool alone = !(b + 1 < values.size() && present(values[b + 1]));
    d += (open ? "L" : "M") + coord(x_of(*c.axis, b)) + " " + coord(y_of(values[b], c.y_max));
    if (!open && alone) d += "h0";
    open = true;
  }
  return d;
}

// The area between two lines, one polygon per run of bins that have both.
std::string band_path(const Chart& c, const std::vector<float>& low, const std::vector<float>& high) {
  std::string d;
  std::size_t b = 0;
  while (b < low.size()) {
    if (!present(low[b])) {
      ++b;
      continue;
    }
    std::size_t e = b;
    while (e < low.size() && present(low[e])) ++e;
    for (std::size_t i = b; i < e; ++i)
      d += (i == b ? "M" : "L") + coord(x_of(*c.axis, i)) + " " + coord(y_of(high[i], c.y_max));
    for (std::size_t i = e; i-- > b;)
      d += "L" + coord(x_of(*c.axis, i)) + " " + coord(y_of(low[i], c.y_max));
    d += "Z";
    b = e;
  }
  return d;
}

std::string time_label(double s) {
  if (s == 0) return "0";
  if (s < 120) return coord(s) + " s";
  if (s < 7200) return coord(s / 60) + " min";
  return coord(s / 3600) + " h";
}

std::string axes(const Chart& c) {
  std::string out = "<g class=\"axes\">";
  for (int i = 0; i <= 4; ++i) {
    const double v = c.y_max * i / 4, y = y_of(v, c.y_max);
    out += "<line class=\"grid\" x1=\"" + coord(kLeft) + "\" x2=\"" + coord(kRight) + "\" y1=\"" +
           coord(y) + "\" y2=\"" + coord(y) + "\"/><text class=\"ylabel\" x=\"" + coord(kLeft - 6) +
           "\" y=\"" + coord(y + 4) + "\">" + html_escape(format_value(c.metric, v)) + "</text>";
  }
  const double span = std::max(c.axis->span, c.axis->bin_seconds);
  static const double kSteps[] = {1,    2,    5,    10,   15,    30,    60,    120,   300,  600,
                                  900,  1800, 3600, 7200, 10800, 21600, 43200, 86400, 172800};
  double step = kSteps[0];
  for (double s : kSteps) {
    step = s;
    if (span / s <= 8) break;
  }
  for (double t = 0; t <= span + 1e-9; t += step) {
    const double x = kLeft + (kRight - kLeft) * t / span;
    // A label at the right edge would be cut in half: it ends there instead.
    const char* css = x > kRight - 20 ? "xlabel last" : "xlabel";
    out += "<line class=\"tick\" x1=\"" + coord(x) + "\" x2=\"" + coord(x) + "\" y1=\"" +
           coord(kBottom) + "\" y2=\"" + coord(kBottom + 4) + "\"/><text class=\"" + css + "\" x=\"" +
           coord(x) + "\" y=\"" + coord(kBottom + 18) + "\">" + time_label(t) + "</text>";
  }
  out += "<text class=\"xcaption\" x=\"" + coord(kLeft) + "\" y=\"" + coord(kHeight - 2) +
         "\">time since the step's first node started</text>";
  return out + "</g>";
}

const char* colour_of(const ChartLine& l, std::size_t index) {
  if (l.kind == "idle") return kIdleColour;
  if (l.kind == "slow") return kSlowColour;
  if (l.kind == "worst") return kWorstColour;
  return kPalette[index % (sizeof kPalette / sizeof *kPalette)];
}

std::string series_group(const std::string& css, const std::string& label, const std::string& node,
                         const std::string& body) {
  return "<g class=\"series " + css + "\" data-series=\"" + html_escape(label) + "\" data-node=\"" +
         html_escape(node) + "\">" + body + "</g>";
}

// A page may hold no control character, not even as a reference, a bidirectional override would
// reorder what a name shows, and a byte that is not UTF-8 breaks the page's encoding: the names
// come from files another user may have written, so those are shown as escapes. A line break or
// a tab is white space in a page, and stays.
std::string visible(std::string_view text) {
  std::string out;
  std::size_t from = 0;
  for (std::size_t at; (at = text.find_first_of("\n\t", from)) != std::string_view::npos;
       from = at + 1)
    out += plan::printable(text.substr(from, at - from)) + text[at];
  return out + plan::printable(text.substr(from));
}

}  // namespace

std::string html_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char ch : visible(text)) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += ch;
    }
  }
  return out;
}

std::string format_value(Metric metric, double v) {
  switch (metric) {
    case Metric::GpuUtil:
    case Metric::Cpu: return plan::fixed_text(v, 0) + "%";
    case Metric::GpuMemory: return plan::fixed_text(v, v > 0 && v < 10 ? 1 : 0) + " GiB";
    case Metric::GpuPower: return plan::fixed_text(v, 0) + " W";
    case Metric::NetRx:
    case Metric::NetTx: return format_bytes(v) + "/s";
  }
  return plan::fixed_text(v, 1);
}

double nice_ceiling(double v, double floor) {
  v = std::max(v, floor);
  if (!(v > 0)) return 1;
  const double p = std::pow(10.0, std::floor(std::log10(v)));
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
    if (m * p >= v * (1 - 1e-9)) return m * p;
  return 10 * p;
}

double nice_bytes_ceiling(double v) {
  double unit = 1;
  while (v >= 1024 * unit && unit < 1024.0 * 1024 * 1024 * 1024 * 1024) unit *= 1024;
  return nice_ceiling(v / unit, 1) * unit;
}

std::string render_chart(const Chart& c, const std::string& figure_id) {
  const MetricInfo& info = metric_info(c.metric);
  std::string svg = "<svg viewBox=\"0 0 " + coord(kWidth) + " " + coord(kHeight) +
                    "\" role=\"img\" aria-label=\"" + html_escape(info.title) + "\">" + axes(c);
  std::string legend;
  if (c.spread) {
    svg += series_group("band outer", "nodes min to max", "",
                        "<path d=\"" + band_path(c, c.nodes.min, c.nodes.max) + "\"/>");
    svg += series_group("band inner", "nodes quartiles", "",
                        "<path d=\"" + band_path(c, c.nodes.q1, c.nodes.q3) + "\"/>");
    svg += series_group("median", "nodes median", "",
                        "<path d=\"" + line_path(c, c.nodes.median) + "\"/>");
    legend += "<li><span class=\"swatch outer\"></span>all " + std::to_string(c.node_count) +
              " nodes, min to max</li><li><span class=\"swatch inner\"></span>the middle half of "
              "the nodes</li><li><span class=\"swatch median\"></span>the median node</li>";
  }
  for (std::size_t i = 0; i < c.lines.size(); ++i) {
    const ChartLine& l = c.lines[i];
    const std::string colour = colour_of(l, i);
    const std::string dash = !c.spread && i >= sizeof kPalette / sizeof *kPalette && l.kind.empty()
                                 ? " stroke-dasharray=\"6 3\""
                                 : "";
    svg += series_group("line " + l.kind, l.label, l.node,
                        "<path d=\"" + line_path(c, l.values) + "\" stroke=\"" + colour + "\"" +
                            dash + "/>");
    std::string what = html_escape(l.label);
    if (l.mean) what += ", mean " + html_escape(format_value(c.metric, *l.mean));
    if (l.kind == "idle") what += c.spread ? " <b class=\"idle\">an idle GPU</b>" : " <b class=\"idle\">idle</b>";
    if (l.kind == "slow") what += " <b class=\"slow\">slow</b>";
    legend += "<li><span class=\"swatch\" style=\"background:" + colour + "\"></span>" + what + "</li>";
  }
  svg += "<line class=\"cursor\" x1=\"0\" x2=\"0\" y1=\"" + coord(kTop) + "\" y2=\"" +
         coord(kBottom) + "\" visibility=\"hidden\"/></svg>";
  return "<figure class=\"chart\" id=\"" + html_escape(figure_id) + "\" data-metric=\"" +
         info.id + "\" data-mode=\"" + (c.spread ? "spread" : "lines") + "\"><figcaption>" +
         html_escape(info.title) + " <span class=\"unit\">(" + html_escape(info.unit) +
         ")</span></figcaption>" + svg + "<div class=\"readout\"></div><ul class=\"legend\">" +
         legend + "</ul></figure>\n";
}

}  // namespace ddp::monitor
