// Means and peaks of one node's records, and the text that shows them: written by the sampler
// into the job's output when the step ends, and again by ddp-report from the file. Both feed the
// same records through NodeSummary::add, so both print the same.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "record.hpp"

namespace ddp::monitor {

// A GPU whose mean utilisation stays below this (percent) did no real work in the step.
inline constexpr double kIdleUtilPercent = 5;

// Up to this many nodes a step's reports show every node's block (the job's output, ddp-report's
// text); beyond, what grows with the nodes is left to ddp-report's spread and worst nodes.
inline constexpr unsigned kFullNodes = 16;

struct GpuSummary {
  GpuInfo info;
  unsigned util_samples = 0;
  double util_sum = 0, util_peak = 0;
  std::optional<double> mem_peak_mib;
  unsigned power_samples = 0;
  double power_sum = 0, power_peak = 0;

  std::optional<double> util_mean() const;
  std::optional<double> power_mean() const;
  bool idle() const;  // sampled, and its mean utilisation below kIdleUtilPercent
};

struct TaskSummary {
  TaskInfo info;
  unsigned samples = 0;
  double cpu_sum = 0, cpu_peak = 0;
  std::optional<double> cpu_mean() const;
};

struct NicSummary {
  std::string nic;
  bool ib = false;
  std::uint64_t rx_bytes = 0, tx_bytes = 0;  // the latest cumulative counts
  double rx_peak = 0, tx_peak = 0;           // bytes per second between two samples
  double last_time = 0;
};

struct NodeSummary {
  std::optional<StartRecord> start;
  std::vector<GpuSummary> gpus;    // by index
  std::vector<TaskSummary> tasks;  // by rank
  std::vector<NicSummary> nics;    // in the order they were first seen
  std::vector<std::string> notes;
  std::optional<std::string> end_reason;  // unset: the file ends without an `end` record
  double duration = 0;                    // seconds, the latest TIME seen
  unsigned samples = 0;                   // sampling rounds (distinct TIMEs of samples)
  std::string file;                       // where the records are, when known

  void add(const Record& record);
  std::vector<const GpuSummary*> idle_gpus() const;

 private:
  double last_sample_time_ = -1;
  GpuSummary& gpu(unsigned index);
  TaskSummary& task(unsigned rank);
  NicSummary& nic(const std::string& name, bool ib);
};

// The node's block of text: a heading, then a table of GPUs, one of tasks and one of NICs, and
// a line for each idle GPU and each note. Ends with a newline.
std::string format_summary(const NodeSummary& node);

// 1536 -> "1.5 KiB"; 0 -> "0 B".
std::string format_bytes(double bytes);

// Columns two spaces apart, each padded to its widest cell (on the left where `right` says the
// column holds numbers), every line after `indent`, trailing spaces dropped.
std::string format_table(const std::vector<std::vector<std::string>>& rows,
                         const std::vector<bool>& right, const std::string& indent);

}  // namespace ddp::monitor
