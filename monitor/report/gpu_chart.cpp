#include "gpu_chart.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "error.hpp"
#include "font.hpp"

namespace ddp::monitor {
namespace {

enum Colour : std::uint8_t { kWhite, kText, kBand, kGrid, kBusy, kIdleFill, kIdleText, kAxis };
const std::vector<Rgb> kPalette = {
    {255, 255, 255}, {32, 32, 32},   {242, 242, 242}, {205, 205, 205},
    {46, 104, 181},  {226, 96, 80},  {190, 40, 30},   {120, 120, 120},
};

constexpr unsigned kScale = 2;
constexpr long kLineHeight = kGlyphHeight * kScale;
constexpr long kWidth = 1200;
constexpr long kTop = 56;
constexpr long kBandHeight = 44;
constexpr long kBandGap = 10;
constexpr long kBottom = 56;

std::string percent(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f%%", v);
  return buf;
}

// A tick step from 1 s up that puts at most `max_ticks` ticks on the axis.
double tick_step(double duration, int max_ticks) {
  static const double steps[] = {1,   2,   5,    10,   15,   30,    60,    120,   300,  600,
                                 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400, 172800};
  for (double s : steps)
    if (duration / s <= max_ticks) return s;
  return std::ceil(duration / max_ticks / 86400) * 86400;
}

std::string tick_label(double t, double step) {
  char buf[32];
  if (step < 60)
    std::snprintf(buf, sizeof buf, "%.0f s", t);
  else if (step < 3600)
    std::snprintf(buf, sizeof buf, "%.0f min", t / 60);
  else
    std::snprintf(buf, sizeof buf, "%.0f h", t / 3600);
  return buf;
}

// The sample that covers time t: each reading stands for the interval that ends at it.
std::optional<double> value_at(const GpuSeries& g, double t) {
  const auto it = std::lower_bound(g.samples.begin(), g.samples.end(), t,
                                   [](const auto& s, double x) { return s.first < x; });
  if (it == g.samples.end()) return std::nullopt;
  return it->second;
}

}  // namespace

Image draw_gpu_chart(const GpuChart& chart) {
  if (chart.gpus.empty())
    throw plan::PlanError("no GPU was sampled (NVML was not available, or the step had no GPUs): "
                          "there is no utilisation to draw");
  if (chart.gpus.size() > kMaxChartGpus)
    throw plan::PlanError(std::to_string(chart.gpus.size()) + " GPUs are more than one chart shows (" +
                          std::to_string(kMaxChartGpus) + "); give the files of fewer nodes");
  unsigned label_width = 0;
  for (const auto& g : chart.gpus) label_width = std::max(label_width, text_width(g.label, kScale));
  const long left = 16 + static_cast<long>(label_width) + 16;
  const long right = kWidth - 16 - static_cast<long>(text_width("IDLE 100%", kScale)) - 16;
  const long plot_width = right - left;
  const long bands = static_cast<long>(chart.gpus.size());
  const long height = kTop + bands * kBandHeight + (bands - 1) * kBandGap + kBottom;
  Image img(kWidth, static_cast<unsigned>(height), kPalette, kWhite);

  draw_text(img, 16, 12, chart.title, kText, kScale);
  draw_text(img, 16, 12 + kLineHeight + 6, "GPU utilisation, each band 0-100%", kAxis, kScale);

  const double duration = std::max(chart.duration, 1.0);
  const auto x_of = [&](double t) { return left + static_cast<long>(t / duration * plot_width); };
  const double step = tick_step(duration, std::max(2L, plot_width / 110));
  const long axis_y = height - kBottom + 8;
  for (double t = 0; t <= duration + 1e-9; t += step) {
    const long x = x_of(t);
    img.fill(x, kTop - 4, x + 1, axis_y + 6, kGrid);
    const std::string label = tick_label(t, step);
    const long w = static_cast<long>(text_width(label, kScale));
    draw_text(img, std::clamp(x - w / 2, 0L, kWidth - w), axis_y + 12, label, kAxis, kScale);
  }
  img.fill(left, axis_y, right, axis_y + 2, kAxis);

  for (long b = 0; b < bands; ++b) {
    const GpuSeries& g = chart.gpus[static_cast<std::size_t>(b)];
    const long top = kTop + b * (kBandHeight + kBandGap);
    const long bottom = top + kBandHeight;
    img.fill(left, top, right, bottom, kBand);
    for (long x = left; x < right; x += 4) img.set(x, top + kBandHeight / 2, kGrid);
    for (long x = left; x < right; ++x) {
      const double t = (static_cast<double>(x - left) + 0.5) / plot_width * duration;
      const auto v = value_at(g, t);
      if (!v) continue;
      const long h = std::lround(std::clamp(*v, 0.0, 100.0) / 100.0 * kBandHeight);
      img.fill(x, bottom - h, x + 1, bottom, g.idle ? kIdleFill : kBusy);
    }
    const long text_y = top + (kBandHeight - kLineHeight) / 2;
    draw_text(img, 16, text_y, g.label, kText, kScale);
    const std::string mean = g.mean ? percent(*g.mean) : "-";
    draw_text(img, right + 16, text_y, g.idle ? "IDLE " + mean : mean, g.idle ? kIdleText : kText,
              kScale);
  }
  return img;
}

}  // namespace ddp::monitor
