#include "step_json.hpp"

#include <cmath>

#include "printable.hpp"

namespace ddp::monitor {
namespace {

using Json = nlohmann::ordered_json;

// nlohmann's dump throws on a string that is not UTF-8 (type_error 316), and a file's name may be
// any bytes, as may what a message quotes: such a byte is written as U+FFFD instead.
Json text(const std::string& s) {
  if (plan::valid_utf8(s)) return s;
  std::string out;
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = plan::utf8_sequence_length(s, i);
    out += n ? s.substr(i, n) : std::string("\xef\xbf\xbd");
    i += n ? n : 1;
  }
  return out;
}

Json texts(const std::vector<std::string>& list) {
  Json out = Json::array();
  for (const std::string& s : list) out.push_back(text(s));
  return out;
}

// Readings are whole percents, MiB and tenths of a watt: more digits would only be noise.
Json number(std::optional<double> v, int digits = 1) {
  if (!v) return nullptr;
  const double scale = std::pow(10.0, digits);
  return std::round(*v * scale) / scale;
}

Json text_or_null(const std::string& s) { return s.empty() ? Json(nullptr) : text(s); }

Json gpu_json(const GpuSummary& g) {
  return {{"gpu", g.info.gpu},
          {"bus", text_or_null(g.info.busid)},
          {"name", text_or_null(g.info.name)},
          {"mem_total_mib", number(g.info.mem_total_mib, 0)},
          {"util_mean", number(g.util_mean())},
          {"util_peak", g.util_samples ? number(g.util_peak) : Json(nullptr)},
          {"mem_peak_mib", number(g.mem_peak_mib, 0)},
          {"power_mean_w", number(g.power_mean())},
          {"power_peak_w", g.power_samples ? number(g.power_peak) : Json(nullptr)},
          {"idle", g.idle()}};
}

Json task_json(const TaskSummary& t) {
  return {{"rank", t.info.rank},
          {"local", t.info.local},
          {"pid", t.info.pid ? Json(t.info.pid) : Json(nullptr)},
          {"cpu_mean", number(t.cpu_mean())},
          {"cpu_peak", t.samples ? number(t.cpu_peak) : Json(nullptr)}};
}

Json nic_json(const NicSummary& n) {
  return {{"nic", text(n.nic)},
          {"ib", n.ib},
          {"rx_bytes", n.rx_bytes},
          {"tx_bytes", n.tx_bytes},
          {"rx_peak_bytes_per_s", number(n.rx_peak, 0)},
          {"tx_peak_bytes_per_s", number(n.tx_peak, 0)}};
}

Json node_json(const NodeLog& n) {
  const NodeSummary& s = n.summary;
  Json gpus = Json::array(), tasks = Json::array(), nics = Json::array();
  for (const GpuSummary& g : s.gpus) gpus.push_back(gpu_json(g));
  for (const TaskSummary& t : s.tasks) tasks.push_back(task_json(t));
  for (const NicSummary& x : s.nics) nics.push_back(nic_json(x));
  return {{"node", text(s.start->node)},
          {"node_index", s.start->node_index},
          {"file", text(n.path)},
          {"start_unix", number(s.start->unix_time, 3)},
          {"interval_s", number(s.start->interval, 3)},
          {"duration_s", number(s.duration, 3)},
          {"samples", s.samples},
          {"complete", s.end_reason.has_value()},
          {"end_reason", s.end_reason ? text(*s.end_reason) : Json(nullptr)},
          {"gpus", std::move(gpus)},
          {"tasks", std::move(tasks)},
          {"nics", std::move(nics)},
          {"notes", texts(s.notes)},
          {"warnings", texts(n.warnings)}};
}

}  // namespace

Json step_json(const StepData& step, const Verdicts& v) {
  const StepTotals totals = totals_of(step);
  const auto name = [&](std::size_t i) { return text(step.nodes[i].summary.start->node); };
  Json idle = Json::array(), slow = Json::array(), worst = Json::array(), nodes = Json::array();
  for (const IdleGpu& i : v.idle)
    idle.push_back({{"node", name(i.node)}, {"gpu", i.gpu}, {"util_mean", number(i.util_mean)}});
  for (const SlowNode& s : v.slow)
    slow.push_back({{"node", name(s.node)}, {"activity", number(s.activity)}});
  for (std::size_t i : v.worst) worst.push_back(name(i));
  for (const NodeLog& n : step.nodes) nodes.push_back(node_json(n));
  return {{"job", step.job},
          {"step", step.step},
          {"nodes_expected", step.expected_nodes},
          {"nodes_reported", step.nodes.size()},
          {"gpus", totals.gpus},
          {"duration_s", number(totals.duration, 3)},
          {"gpu_util_mean", number(totals.gpu_util_mean)},
          {"activity", v.gpu_step ? "gpu_util" : "cpu"},
          {"median_activity", number(v.median_activity)},
          {"slow_fraction", kSlowFraction},
          {"idle_gpus", std::move(idle)},
          {"slow_nodes", std::move(slow)},
          {"worst_nodes", std::move(worst)},
          {"nodes", std::move(nodes)}};
}

}  // namespace ddp::monitor
