// ddp-report's work: read the per-node files of one or more steps, print each step's summary
// (the nodes' blocks as the job's output showed them, after a line for the whole step), and
// build the utilisation chart of one step.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "gpu_chart.hpp"
#include "summary.hpp"

namespace ddp::monitor {

struct NodeLog {
  std::string path;
  NodeSummary summary;
  std::vector<std::pair<unsigned, std::vector<std::pair<double, double>>>> util;  // per GPU
  std::vector<std::string> warnings;  // e.g. a last line cut short
};

// Throws ddp::plan::PlanError naming FILE:LINE and what is wrong there.
NodeLog read_node_log(const std::string& path);

// The files named, with each directory replaced by its ddp-monitor-*.txt files (sorted). Throws
// PlanError for a path that does not exist or a directory without such files.
std::vector<std::string> monitor_files(const std::vector<std::string>& paths);

struct StepLogs {
  std::uint32_t job = 0, step = 0;
  std::vector<NodeLog> nodes;  // by node index
};

// Grouped by job and step, in that order.
std::vector<StepLogs> group_by_step(std::vector<NodeLog> logs);

// "job 17 step 0: 2 nodes, 4 GPUs, mean GPU utilisation 49%, 1 idle (n1 GPU 1)" and the nodes'
// blocks.
std::string format_step(const StepLogs& step);

// Times on the chart count from the earliest node's start (wall clock), so nodes line up.
GpuChart step_chart(const StepLogs& step);

}  // namespace ddp::monitor
