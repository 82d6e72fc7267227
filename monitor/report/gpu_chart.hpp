// The chart of `ddp-report --png`: GPU utilisation over time, one band per GPU (0% at its
// bottom, 100% at its top), all bands on one time axis, idle GPUs in red.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "png.hpp"

namespace ddp::monitor {

struct GpuSeries {
  std::string label;                               // "n1 GPU 0"
  std::vector<std::pair<double, double>> samples;  // (seconds on the chart's axis, percent)
  std::optional<double> mean;
  bool idle = false;
};

struct GpuChart {
  std::string title;
  double duration = 0;  // seconds the axis spans
  std::vector<GpuSeries> gpus;
};

inline constexpr unsigned kMaxChartGpus = 512;

// Throws ddp::plan::PlanError when there is nothing to draw or too much (kMaxChartGpus).
Image draw_gpu_chart(const GpuChart& chart);

}  // namespace ddp::monitor
