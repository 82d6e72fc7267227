// One chart of the report page as inline SVG: a value over the step's time axis, either a line
// per GPU, rank or NIC (small steps) or the spread of the nodes (min to max, the quartiles, the
// median) with the worst nodes drawn on it. Idle GPUs are red, slow nodes orange. Each drawn
// series is a <g class="series" data-series="LABEL" data-node="NODE">, which the page's script
// and the browser test find.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "series.hpp"

namespace ddp::monitor {

// The SVG's view box and the plot area inside it (labels go around it); the page's script maps
// the pointer with the same numbers.
inline constexpr double kChartWidth = 960, kChartHeight = 240;
inline constexpr double kPlotLeft = 78, kPlotRight = 944, kPlotTop = 12, kPlotBottom = 208;

struct ChartLine {
  std::string label;  // "n1 GPU 0", "n7"
  std::string node;
  std::vector<float> values;  // per bin of the axis
  std::string kind;           // "", "idle", "slow" or "worst": colour and legend
  std::optional<double> mean;
};

struct Chart {
  Metric metric = Metric::GpuUtil;
  const TimeAxis* axis = nullptr;
  double y_max = 1;
  bool spread = false;  // the spread of the nodes (below), else one line per entity
  Spread nodes;         // when spread
  std::size_t node_count = 0;
  std::vector<ChartLine> lines;
};

// "95%", "40.0 GiB", "612 W", "47.8 MiB/s": a value in the metric's unit.
std::string format_value(Metric metric, double value);

// The smallest of 1, 2, 2.5, 5 x 10^k that is at least `v` (and at least `floor`).
double nice_ceiling(double v, double floor);
// The same in the binary unit format_bytes shows `v` in: 4.4 GiB -> 5 GiB.
double nice_bytes_ceiling(double v);

// The <figure id="FIGURE_ID"> of one chart: caption, SVG, a line for the pointer's readout, legend.
std::string render_chart(const Chart& chart, const std::string& figure_id);

// Text for HTML: & < > " ' escaped, and control characters, bidirectional overrides and bytes
// that are not UTF-8 written as printable.hpp's escapes.
std::string html_escape(const std::string& text);

}  // namespace ddp::monitor
