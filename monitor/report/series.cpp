#include "series.hpp"

#include <algorithm>
#include <cmath>

namespace ddp::monitor {
namespace {

const std::array<MetricInfo, kMetrics> kInfo = {{
    {"gpu_util", "GPU utilisation", "%", false},
    {"gpu_memory", "GPU memory used", "GiB", false},
    {"gpu_power", "GPU power", "W", false},
    {"cpu", "CPU per rank", "%", false},
    {"net_rx", "NIC bytes received", "B/s", true},
    {"net_tx", "NIC bytes sent", "B/s", true},
}};

std::size_t idx(Metric m) { return static_cast<std::size_t>(m); }

}  // namespace

const MetricInfo& metric_info(Metric m) { return kInfo[idx(m)]; }
Metric metric_at(std::size_t i) { return static_cast<Metric>(i); }

TimeAxis TimeAxis::over(double origin_unix, double span, double interval) {
  TimeAxis a;
  a.origin_unix = origin_unix;
  a.span = std::max(0.0, span);
  const double finest = std::max(interval, 1e-3);
  a.bin_seconds = std::max(finest, a.span / static_cast<double>(kMaxBins));
  a.bins = std::clamp<std::size_t>(static_cast<std::size_t>(std::floor(a.span / a.bin_seconds)) + 1,
                                   1, kMaxBins);
  return a;
}

std::size_t TimeAxis::bin_of(double t) const {
  if (!(t > 0)) return 0;
  return std::min(bins - 1, static_cast<std::size_t>(t / bin_seconds));
}

NodeSeriesBuilder::NodeSeriesBuilder(const TimeAxis& axis, std::string node, double offset)
    : axis_(axis), node_(std::move(node)), offset_(offset) {}

NodeSeriesBuilder::Accumulator& NodeSeriesBuilder::entity(Metric m, const std::string& name,
                                                          std::optional<unsigned> gpu) {
  auto& list = acc_[idx(m)];
  for (Accumulator& a : list)
    if (a.entity == name) return a;
  Accumulator a;
  a.entity = name;
  a.is_gpu = gpu.has_value();
  a.gpu = gpu.value_or(0);
  a.sum.assign(axis_.bins, 0);
  a.count.assign(axis_.bins, 0);
  list.push_back(std::move(a));
  return list.back();
}

void NodeSeriesBuilder::put(Metric m, const std::string& name, std::optional<unsigned> gpu,
                            double time, double v) {
  Accumulator& a = entity(m, name, gpu);
  const std::size_t b = axis_.bin_of(time + offset_);
  a.sum[b] += static_cast<float>(v);
  ++a.count[b];
}

void NodeSeriesBuilder::add(const Record& r) {
  if (const auto* g = std::get_if<GpuSample>(&r.body)) {
    const std::string name = "GPU " + std::to_string(g->gpu);
    if (g->util) put(Metric::GpuUtil, name, g->gpu, r.time, *g->util);
    if (g->mem_used_mib) put(Metric::GpuMemory, name, g->gpu, r.time, *g->mem_used_mib / 1024);
    if (g->power_w) put(Metric::GpuPower, name, g->gpu, r.time, *g->power_w);
  } else if (const auto* c = std::get_if<CpuSample>(&r.body)) {
    put(Metric::Cpu, "rank " + std::to_string(c->rank), std::nullopt, r.time, c->cpu);
  } else if (const auto* n = std::get_if<NetSample>(&r.body)) {
    auto it = std::find_if(nics_.begin(), nics_.end(),
                           [&](const NicState& s) { return s.nic == n->nic && s.ib == n->ib; });
    if (it == nics_.end()) it = nics_.insert(nics_.end(), NicState{n->nic, n->ib, 0, 0, 0});
    // Counts run from time 0; a smaller count means the counter was reset: no rate then.
    const double dt = r.time - it->time;
    const std::string name = n->nic + (n->ib ? " (IB)" : "");
    if (dt > 0 && n->rx_bytes >= it->rx && n->tx_bytes >= it->tx) {
      put(Metric::NetRx, name, std::nullopt, r.time, static_cast<double>(n->rx_bytes - it->rx) / dt);
      put(Metric::NetTx, name, std::nullopt, r.time, static_cast<double>(n->tx_bytes - it->tx) / dt);
    }
    *it = NicState{n->nic, n->ib, r.time, n->rx_bytes, n->tx_bytes};
  }
}

NodeSeriesBuilder::Result NodeSeriesBuilder::finish(const std::vector<unsigned>& idle_gpus) const {
  Result out;
  for (std::size_t m = 0; m < kMetrics; ++m) {
    const bool sum = kInfo[m].sum_over_entities;
    std::vector<float> node(axis_.bins, kNoValue);
    std::vector<unsigned> contributing(axis_.bins, 0);
    for (const Accumulator& a : acc_[m]) {
      Line line;
      line.label = node_ + " " + a.entity;
      line.node = node_;
      line.idle = a.is_gpu && std::count(idle_gpus.begin(), idle_gpus.end(), a.gpu) > 0;
      line.values.assign(axis_.bins, kNoValue);
      for (std::size_t b = 0; b < axis_.bins; ++b) {
        if (a.count[b] == 0) continue;
        const float v = a.sum[b] / static_cast<float>(a.count[b]);
        line.values[b] = v;
        node[b] = present(node[b]) ? node[b] + v : v;
        ++contributing[b];
      }
      out.lines[m].push_back(std::move(line));
    }
    if (!sum)
      for (std::size_t b = 0; b < axis_.bins; ++b)
        if (contributing[b]) node[b] /= static_cast<float>(contributing[b]);
    out.node[m] = std::move(node);
  }
  return out;
}

StepSeries::StepSeries(const TimeAxis& axis, std::size_t nodes) : axis_(axis) {
  for (auto& per_node : nodes_) per_node.assign(nodes, std::vector<float>(axis.bins, kNoValue));
}

void StepSeries::add_node(std::size_t index, NodeSeriesBuilder::Result&& node) {
  for (std::size_t m = 0; m < kMetrics; ++m) {
    nodes_[m].at(index) = std::move(node.node[m]);
    if (too_many_[m]) continue;
    if (lines_[m].size() + node.lines[m].size() > kMaxLines) {
      too_many_[m] = true;
      lines_[m] = {};
      line_nodes_[m] = {};
      continue;
    }
    // After the lines of the nodes before it, whatever order the nodes come in.
    const auto at = std::upper_bound(line_nodes_[m].begin(), line_nodes_[m].end(), index) -
                    line_nodes_[m].begin();
    line_nodes_[m].insert(line_nodes_[m].begin() + at, node.lines[m].size(), index);
    lines_[m].insert(lines_[m].begin() + at, std::make_move_iterator(node.lines[m].begin()),
                     std::make_move_iterator(node.lines[m].end()));
  }
}

bool StepSeries::has_data(Metric m) const {
  for (const auto& node : nodes_[idx(m)])
    if (std::any_of(node.begin(), node.end(), present)) return true;
  return false;
}

Spread spread_of(const std::vector<std::vector<float>>& per_node, std::size_t bins) {
  Spread s;
  for (auto* v : {&s.min, &s.q1, &s.median, &s.q3, &s.max}) v->assign(bins, kNoValue);
  std::vector<float> column;
  column.reserve(per_node.size());
  for (std::size_t b = 0; b < bins; ++b) {
    column.clear();
    for (const auto& node : per_node)
      if (b < node.size() && present(node[b])) column.push_back(node[b]);
    if (column.empty()) continue;
    std::sort(column.begin(), column.end());
    // The nearest-rank quantile: always one of the nodes' own values.
    const auto at = [&](double q) {
      return column[std::min(column.size() - 1,
                             static_cast<std::size_t>(q * static_cast<double>(column.size())))];
    };
    s.min[b] = column.front();
    s.q1[b] = at(0.25);
    s.median[b] = at(0.5);
    s.q3[b] = at(0.75);
    s.max[b] = column.back();
  }
  return s;
}

}  // namespace ddp::monitor
