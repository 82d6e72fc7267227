#include "verdicts.hpp"

#include <algorithm>
#include <numeric>

namespace ddp::monitor {

std::optional<double> node_activity(const NodeSummary& node, bool gpu_step) {
  double sum = 0;
  unsigned n = 0;
  if (gpu_step) {
    for (const GpuSummary& g : node.gpus)
      if (const auto mean = g.util_mean(); mean && !g.idle()) {
        sum += *mean;
        ++n;
      }
  } else {
    for (const TaskSummary& t : node.tasks)
      if (const auto mean = t.cpu_mean()) {
        sum += *mean;
        ++n;
      }
  }
  if (n == 0) return std::nullopt;
  return sum / n;
}

std::string Verdicts::activity_name() const {
  return gpu_step ? "GPU utilisation" : "CPU use per rank";
}

Verdicts judge(const StepData& step) {
  Verdicts v;
  const auto& nodes = step.nodes;
  for (const NodeLog& n : nodes)
    for (const GpuSummary& g : n.summary.gpus) v.gpu_step = v.gpu_step || g.util_samples > 0;

  v.flagged.assign(nodes.size(), false);
  for (std::size_t i = 0; i < nodes.size(); ++i)
    for (const GpuSummary* g : nodes[i].summary.idle_gpus()) {
      v.idle.push_back({i, g->info.gpu, g->util_mean().value_or(0)});
      v.flagged[i] = true;
    }

  std::vector<std::optional<double>> activity;
  std::vector<double> known;
  for (const NodeLog& n : nodes) {
    activity.push_back(node_activity(n.summary, v.gpu_step));
    if (activity.back()) known.push_back(*activity.back());
  }
  if (!known.empty()) {
    // With an even count the upper of the two middle values: of two nodes, the less busy one is
    // measured against the busier one.
    std::sort(known.begin(), known.end());
    v.median_activity = known[known.size() / 2];
  }
  if (v.median_activity && *v.median_activity >= kIdleUtilPercent)
    for (std::size_t i = 0; i < nodes.size(); ++i)
      if (activity[i] && *activity[i] < kSlowFraction * *v.median_activity) {
        v.slow.push_back({i, *activity[i]});
        v.flagged[i] = true;
      }

  std::vector<std::size_t> order(nodes.size());
  std::iota(order.begin(), order.end(), 0);
  // Least active first; a node without readings is the least active of all.
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return activity[a].value_or(-1) < activity[b].value_or(-1);
  });
  // Flagged nodes first, then the least active others, drawn least active first.
  for (std::size_t i : order)
    if (v.flagged[i] && v.worst.size() < kMostWorstNodes) v.worst.push_back(i);
  for (std::size_t i : order)
    if (!v.flagged[i] && v.worst.size() < kWorstNodes) v.worst.push_back(i);
  const auto rank_of = [&](std::size_t node) {
    return std::find(order.begin(), order.end(), node) - order.begin();
  };
  std::sort(v.worst.begin(), v.worst.end(),
            [&](std::size_t a, std::size_t b) { return rank_of(a) < rank_of(b); });
  return v;
}

StepTotals totals_of(const StepData& step) {
  StepTotals t;
  unsigned sampled = 0;
  double util_sum = 0;
  for (const NodeLog& n : step.nodes) {
    t.duration = std::max(t.duration, n.summary.duration);
    for (const GpuSummary& g : n.summary.gpus) {
      ++t.gpus;
      if (const auto mean = g.util_mean()) {
        ++sampled;
        util_sum += *mean;
      }
    }
  }
  if (sampled) t.gpu_util_mean = util_sum / sampled;
  return t;
}

NodeFigures figures_of(const NodeSummary& node) {
  NodeFigures f;
  const auto mean_of = [](const auto& items, auto value) -> std::optional<double> {
    double sum = 0;
    unsigned n = 0;
    for (const auto& item : items)
      if (const std::optional<double> v = value(item)) {
        sum += *v;
        ++n;
      }
    if (n == 0) return std::nullopt;
    return sum / n;
  };
  f.gpu_util_mean = mean_of(node.gpus, [](const GpuSummary& g) { return g.util_mean(); });
  f.gpu_power_mean = mean_of(node.gpus, [](const GpuSummary& g) { return g.power_mean(); });
  f.cpu_mean = mean_of(node.tasks, [](const TaskSummary& t) { return t.cpu_mean(); });
  for (const GpuSummary& g : node.gpus)
    if (g.mem_peak_mib) f.gpu_mem_peak_gib = std::max(f.gpu_mem_peak_gib.value_or(0), *g.mem_peak_mib / 1024);
  for (const NicSummary& n : node.nics) {
    f.rx_bytes = f.rx_bytes.value_or(0) + static_cast<double>(n.rx_bytes);
    f.tx_bytes = f.tx_bytes.value_or(0) + static_cast<double>(n.tx_bytes);
  }
  return f;
}

}  // namespace ddp::monitor
