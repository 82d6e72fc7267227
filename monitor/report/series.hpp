// The step's readings over time, in a bounded amount of memory whatever the job's size and length:
// one time axis for all nodes (aligned by their wall clocks) cut into at most kMaxBins bins, and
// per node and metric one value per bin. A node's file is streamed through a NodeSeriesBuilder
// and reduced to its node values when it ends, so memory grows with nodes x bins, never with the
// samples; only small steps keep a line per GPU, rank or NIC as well (kMaxLines).
#pragma once

#include <array>
#include <cmath>
#include <cstddef>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "record.hpp"

namespace ddp::monitor {

// About two pixels per bin on the report page's charts.
inline constexpr std::size_t kMaxBins = 480;
// Up to this many lines a chart shows every GPU (rank, NIC) on its own; beyond, the spread of the
// nodes and the worst nodes.
inline constexpr std::size_t kMaxLines = 16;

enum class Metric { GpuUtil, GpuMemory, GpuPower, Cpu, NetRx, NetTx };
inline constexpr std::size_t kMetrics = 6;

struct MetricInfo {
  const char* id;     // "gpu_util": in JSON, HTML ids and tests
  const char* title;  // "GPU utilisation"
  const char* unit;   // "%", "GiB", "W", "B/s"
  // A node's value: the sum over its NICs (bytes through the node), else the mean over its GPUs
  // or ranks.
  bool sum_over_entities;
};
const MetricInfo& metric_info(Metric m);
Metric metric_at(std::size_t i);

inline constexpr float kNoValue = std::numeric_limits<float>::quiet_NaN();
// Whether a bin or sample has a value (kNoValue is NaN).
inline bool present(float v) { return !std::isnan(v); }

struct TimeAxis {
  double origin_unix = 0;  // the earliest node's start, seconds since 1970
  double span = 0;         // seconds from the origin to the latest node's last record
  double bin_seconds = 1;
  std::size_t bins = 1;

  // Bins of at least `interval` seconds (the sampling interval: no bin between two samples stays
  // empty), at most kMaxBins of them.
  static TimeAxis over(double origin_unix, double span, double interval);
  std::size_t bin_of(double seconds_since_origin) const;
  double bin_middle(std::size_t bin) const { return (static_cast<double>(bin) + 0.5) * bin_seconds; }
};

// A line on a chart: one GPU, rank or NIC (small steps), or one node.
struct Line {
  std::string label;  // "n1 GPU 0", "n2 rank 3", "n1 eth0", "n7"
  std::string node;
  std::vector<float> values;  // per bin; kNoValue where nothing was sampled
  bool idle = false;          // a GPU below the idle threshold (summary.hpp)
};

// One node's values per metric, while its file is read.
class NodeSeriesBuilder {
 public:
  NodeSeriesBuilder(const TimeAxis& axis, std::string node, double offset);
  void add(const Record& record);
  // The node's value per bin and metric, and its own lines (GPUs, ranks, NICs). `idle_gpus` are
  // the GPU indices the summary found idle.
  struct Result {
    std::array<std::vector<float>, kMetrics> node;
    std::array<std::vector<Line>, kMetrics> lines;
  };
  Result finish(const std::vector<unsigned>& idle_gpus) const;

 private:
  struct Accumulator {
    std::string entity;  // "GPU 0", "rank 3", "eth0"
    unsigned gpu = 0;
    bool is_gpu = false;
    std::vector<float> sum;
    std::vector<std::uint32_t> count;
  };
  struct NicState {
    std::string nic;
    bool ib = false;
    double time = 0;
    std::uint64_t rx = 0, tx = 0;
  };
  Accumulator& entity(Metric m, const std::string& name, std::optional<unsigned> gpu);
  void put(Metric m, const std::string& name, std::optional<unsigned> gpu, double time, double v);

  const TimeAxis& axis_;
  std::string node_;
  double offset_;  // this node's time 0 on the step's axis
  std::array<std::vector<Accumulator>, kMetrics> acc_;
  std::vector<NicState> nics_;
};

// Every node's values, and the lines of small steps.
class StepSeries {
 public:
  StepSeries(const TimeAxis& axis, std::size_t nodes);
  // The node at `index` (in the step's node order); nodes may come in any order.
  void add_node(std::size_t index, NodeSeriesBuilder::Result&& node);

  const TimeAxis& axis() const { return axis_; }
  // Per metric, per node; a node not added has no value anywhere.
  const std::vector<std::vector<float>>& node_values(Metric m) const { return nodes_[index(m)]; }
  // Every GPU's (rank's, NIC's) line in node order, or nothing when there were more than kMaxLines.
  const std::vector<Line>& lines(Metric m) const { return lines_[index(m)]; }
  bool has_data(Metric m) const;

 private:
  static std::size_t index(Metric m) { return static_cast<std::size_t>(m); }
  TimeAxis axis_;
  std::array<std::vector<std::vector<float>>, kMetrics> nodes_;
  std::array<std::vector<Line>, kMetrics> lines_;
  std::array<std::vector<std::size_t>, kMetrics> line_nodes_;  // each line's node index
  std::array<bool, kMetrics> too_many_ = {};
};

// The spread of the nodes' values per bin: min, quartiles, median and max over the nodes that
// have a value there.
struct Spread {
  std::vector<float> min, q1, median, q3, max;
};
Spread spread_of(const std::vector<std::vector<float>>& per_node, std::size_t bins);

}  // namespace ddp::monitor
