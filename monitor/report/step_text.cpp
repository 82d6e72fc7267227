#include "step_text.hpp"

#include <algorithm>
#include <cstdio>

#include "human_text.hpp"
#include "printable.hpp"

namespace ddp::monitor {
namespace {

// The text goes to a terminal, and the files may be another user's: what they say is shown with
// its control characters escaped, so that it cannot move the cursor, clear the screen or retitle
// the window, and no longer than any real name or note is.
constexpr std::size_t kNameBytes = 256, kNoteBytes = 1024;

std::string shown(const std::string& s, std::size_t most = kNameBytes) {
  return plan::printable(s, most);
}

// What the node's block shows of the file: every string of it made safe to print.
NodeSummary shown_summary(NodeSummary n) {
  if (n.start) n.start->node = shown(n.start->node);
  for (GpuSummary& g : n.gpus) {
    g.info.busid = shown(g.info.busid);
    g.info.name = shown(g.info.name);
  }
  for (NicSummary& x : n.nics) x.nic = shown(x.nic);
  for (std::string& note : n.notes) note = shown(note, kNoteBytes);
  if (n.end_reason) *n.end_reason = shown(*n.end_reason);
  n.file = plan::printable(n.file);
  return n;
}

std::string node_name(const NodeLog& n) { return shown(n.summary.start->node); }

std::string plural(std::size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// min, median and max of one figure over the nodes that have it.
std::vector<std::string> spread_row(const std::string& name, const std::vector<NodeFigures>& figures,
                                    std::optional<double> NodeFigures::*field,
                                    std::string (*show)(double)) {
  std::vector<double> v;
  for (const NodeFigures& f : figures)
    if (f.*field) v.push_back(*(f.*field));
  if (v.empty()) return {};
  std::sort(v.begin(), v.end());
  return {name, show(v.front()), show(v[v.size() / 2]), show(v.back())};
}

std::string pct(double v) { return plan::fixed_text(v, 0) + "%"; }
std::string gib(double v) { return plan::fixed_text(v, 1) + " GiB"; }
std::string watts(double v) { return plan::fixed_text(v, 0) + " W"; }
std::string bytes(double v) { return format_bytes(v); }

std::string node_block(const NodeLog& n) {
  std::string s = format_summary(shown_summary(n.summary));
  for (const std::string& w : n.warnings) s += "  warning: " + plan::printable(w) + "\n";
  return s;
}

}  // namespace

std::string listed(const std::vector<std::string>& items, std::size_t most) {
  std::string out;
  for (std::size_t i = 0; i < items.size() && i < most; ++i) out += (i ? ", " : "") + items[i];
  if (items.size() > most) out += " and " + std::to_string(items.size() - most) + " more";
  return out;
}

std::string step_line(const StepData& step, const Verdicts& v) {
  const StepTotals totals = totals_of(step);
  std::string s = "job " + std::to_string(step.job) + " step " + std::to_string(step.step) + ": " +
                  std::to_string(step.nodes.size()) + " of " +
                  plural(step.expected_nodes, "node", "nodes") + ", " +
                  plural(totals.gpus, "GPU", "GPUs") + ", " + plan::duration_text(totals.duration);
  if (totals.gpu_util_mean) s += ", mean GPU utilisation " + pct(*totals.gpu_util_mean);
  if (!v.idle.empty()) {
    std::vector<std::string> names;
    for (const IdleGpu& i : v.idle)
      names.push_back(node_name(step.nodes[i.node]) + " GPU " + std::to_string(i.gpu));
    s += ", " + std::to_string(v.idle.size()) + " idle (" + listed(names) + ")";
  }
  if (!v.slow.empty()) {
    std::vector<std::string> names;
    for (const SlowNode& n : v.slow) names.push_back(node_name(step.nodes[n.node]) + " " + pct(n.activity));
    s += ", " + std::to_string(v.slow.size()) + " slow (" + listed(names) + "; " +
         v.activity_name() + ", the median node " + pct(v.median_activity.value_or(0)) + ")";
  }
  return s + "\n";
}

std::string format_step(const StepData& step, const Verdicts& v) {
  std::string s = step_line(step, v);
  if (step.nodes.size() <= kFullNodes) {
    for (const NodeLog& n : step.nodes) s += node_block(n);
    return s;
  }
  std::vector<NodeFigures> figures;
  for (const NodeLog& n : step.nodes) figures.push_back(figures_of(n.summary));
  std::vector<std::vector<std::string>> rows = {{"OVER THE NODES", "MIN", "MEDIAN", "MAX"}};
  for (auto row : {spread_row("GPU utilisation, mean", figures, &NodeFigures::gpu_util_mean, pct),
                   spread_row("GPU memory, peak", figures, &NodeFigures::gpu_mem_peak_gib, gib),
                   spread_row("GPU power, mean", figures, &NodeFigures::gpu_power_mean, watts),
                   spread_row("CPU per rank, mean", figures, &NodeFigures::cpu_mean, pct),
                   spread_row("NIC bytes received", figures, &NodeFigures::rx_bytes, bytes),
                   spread_row("NIC bytes sent", figures, &NodeFigures::tx_bytes, bytes)})
    if (!row.empty()) rows.push_back(std::move(row));
  s += format_table(rows, {false, true, true, true}, "  ");
  s += "the " + plural(v.worst.size(), "node", "nodes") + " with the least " + v.activity_name() +
       " or a flag; the other " + std::to_string(step.nodes.size() - v.worst.size()) +
       " lie within the spread above (ddp-report --json lists every node):\n";
  for (std::size_t i : v.worst) s += node_block(step.nodes[i]);
  // Warnings are about the files: the first is said, the others counted.
  std::vector<std::string> warnings;
  for (std::size_t i = 0; i < step.nodes.size(); ++i)
    if (std::find(v.worst.begin(), v.worst.end(), i) == v.worst.end())
      warnings.insert(warnings.end(), step.nodes[i].warnings.begin(), step.nodes[i].warnings.end());
  if (!warnings.empty())
    s += "warning: " + plan::printable(warnings.front()) +
         (warnings.size() > 1 ? " (and " + std::to_string(warnings.size() - 1) +
                                    " more warnings about other files; --json lists them)"
                              : std::string()) +
         "\n";
  return s;
}

}  // namespace ddp::monitor
