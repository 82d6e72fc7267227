#include "step_charts.hpp"

#include <algorithm>
#include <cmath>

namespace ddp::monitor {
namespace {

std::optional<double> mean_of(const std::vector<float>& values) {
  double sum = 0;
  unsigned n = 0;
  for (float v : values)
    if (present(v)) {
      sum += v;
      ++n;
    }
  if (n == 0) return std::nullopt;
  return sum / n;
}

double highest(const std::vector<float>& values, double so_far) {
  for (float v : values)
    if (present(v)) so_far = std::max<double>(so_far, v);
  return so_far;
}

// Percentages of a GPU end at 100; CPU use per rank may pass it (several threads); memory ends at
// the largest GPU's size when the driver gave it.
double y_max_of(Metric m, const StepData& step, double observed) {
  switch (m) {
    case Metric::GpuUtil: return 100;
    case Metric::Cpu: return nice_ceiling(observed, 100);
    case Metric::GpuMemory: {
      double total = 0;
      for (const NodeLog& n : step.nodes)
        for (const GpuSummary& g : n.summary.gpus) total = std::max(total, g.info.mem_total_mib.value_or(0) / 1024);
      return total > 0 ? std::max(total, observed) : nice_ceiling(observed, 1);
    }
    case Metric::NetRx:
    case Metric::NetTx: return nice_bytes_ceiling(observed);
    default: return nice_ceiling(observed, 1);
  }
}

std::string kind_of_node(const Verdicts& v, std::size_t node) {
  for (const IdleGpu& i : v.idle)
    if (i.node == node) return "idle";
  for (const SlowNode& s : v.slow)
    if (s.node == node) return "slow";
  return "worst";
}

bool slow(const Verdicts& v, const std::string& node, const StepData& step) {
  for (const SlowNode& s : v.slow)
    if (step.nodes[s.node].summary.start->node == node) return true;
  return false;
}

}  // namespace

std::vector<Chart> step_charts(const StepData& step, const Verdicts& v) {
  std::vector<Chart> charts;
  const StepSeries& series = step.series;
  for (std::size_t i = 0; i < kMetrics; ++i) {
    const Metric m = metric_at(i);
    if (!series.has_data(m)) continue;
    Chart c;
    c.metric = m;
    c.axis = &series.axis();
    c.node_count = step.nodes.size();
    double observed = 0;
    const auto& lines = series.lines(m);
    if (!lines.empty()) {
      for (const Line& l : lines) {
        ChartLine cl{l.label, l.node, l.values, "", mean_of(l.values)};
        if (l.idle) cl.kind = "idle";
        else if (slow(v, l.node, step)) cl.kind = "slow";
        observed = highest(l.values, observed);
        c.lines.push_back(std::move(cl));
      }
    } else {
      c.spread = true;
      c.nodes = spread_of(series.node_values(m), series.axis().bins);
      observed = highest(c.nodes.max, observed);
      for (std::size_t node : v.worst) {
        const auto& values = series.node_values(m)[node];
        const std::string& name = step.nodes[node].summary.start->node;
        c.lines.push_back({name, name, values, kind_of_node(v, node), mean_of(values)});
      }
    }
    c.y_max = y_max_of(m, step, observed);
    charts.push_back(std::move(c));
  }
  return charts;
}

}  // namespace ddp::monitor
