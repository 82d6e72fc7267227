// What a step's report points at, the same in text, JSON and the page: idle GPUs (summary.hpp's
// rule), slow nodes, and the worst nodes that the charts of a large step draw on their own.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "step_report.hpp"

namespace ddp::monitor {

// A node is slow when its activity is below this fraction of the median node's: in a DDP step
// every rank does the same work, so a node whose GPUs (or, without GPUs, ranks) are less busy
// than their peers' waits on something of its own (data loading, throttling, a noisy neighbour).
inline constexpr double kSlowFraction = 0.75;
// The worst nodes drawn on a large step's charts: at least this many...
inline constexpr std::size_t kWorstNodes = 3;
// ... and every flagged node (slow, or with an idle GPU) up to this many.
inline constexpr std::size_t kMostWorstNodes = 5;

// The mean utilisation of a node's GPUs that are not idle (an idle GPU is flagged on its own), or
// for a step without GPU readings the mean CPU use of its ranks; nullopt when nothing was sampled.
std::optional<double> node_activity(const NodeSummary& node, bool gpu_step);

struct IdleGpu {
  std::size_t node = 0;  // index into StepData::nodes
  unsigned gpu = 0;
  double util_mean = 0;
};

struct SlowNode {
  std::size_t node = 0;
  double activity = 0;
};

struct Verdicts {
  bool gpu_step = false;  // some GPU reading exists: activity is GPU utilisation
  std::optional<double> median_activity;
  std::vector<IdleGpu> idle;
  std::vector<SlowNode> slow;
  std::vector<std::size_t> worst;  // least active first
  std::vector<bool> flagged;       // per node: slow, or has an idle GPU
  // "GPU utilisation" or "CPU per rank": what activity measures, for messages.
  std::string activity_name() const;
};

Verdicts judge(const StepData& step);

// The step in a few numbers: its GPUs, their mean utilisation, the longest node's time.
struct StepTotals {
  unsigned gpus = 0;
  std::optional<double> gpu_util_mean;  // over the GPUs that were sampled
  double duration = 0;
};
StepTotals totals_of(const StepData& step);

// A node's figures in one number each, for the spread of a large step and the page's node table.
struct NodeFigures {
  std::optional<double> gpu_util_mean;    // over its GPUs, idle ones included
  std::optional<double> gpu_mem_peak_gib; // its fullest GPU
  std::optional<double> gpu_power_mean;   // per GPU
  std::optional<double> cpu_mean;         // per rank
  std::optional<double> rx_bytes, tx_bytes;  // through all its NICs
};
NodeFigures figures_of(const NodeSummary& node);

}  // namespace ddp::monitor
