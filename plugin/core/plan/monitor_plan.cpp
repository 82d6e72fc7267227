#include "monitor_plan.hpp"

#include <algorithm>

#include "control.hpp"
#include "planner.hpp"

namespace ddp::plan {

std::optional<MonitorPlan> plan_monitor(const UserOptions& options, const ResolvedProfile& profile) {
  const MonitorDefaults& site = profile.monitor;
  MonitorPlan plan;
  if (options.monitor) {
    if (!options.monitor->on) return std::nullopt;
    plan.reason = "--" + std::string(kOptMonitor);
    if (options.monitor->interval) plan.reason += "=" + std::to_string(*options.monitor->interval);
  } else if (site.enabled.value_or(false)) {
    plan.reason = "profile " + profile.name + " (monitor.enabled)";
  } else {
    return std::nullopt;
  }
  plan.interval = options.monitor && options.monitor->interval
                      ? *options.monitor->interval
                      : site.interval.value_or(monitor::kDefaultInterval);
  plan.dir = site.dir;
  return plan;
}

std::string monitor_program(const PlugstackConfig& config) {
  return config.monitor_program.value_or(DDP_MONITOR_PROGRAM);
}

monitor::SamplerArgs sampler_args(const StepPlan& step, const MonitorPlan& plan,
                                  const GpuFacts& gpus, const NodePlacement& placement) {
  const StepFacts& f = step.facts;
  monitor::SamplerArgs a;
  a.interval = plan.interval;
  a.dir = plan.dir.value_or("");
  a.job = f.job_id;
  a.step = f.step_id;
  a.node = f.hostname;
  a.node_index = f.node_id;
  a.nodes = f.nodes;
  a.tasks = f.local_tasks;
  a.control_fd = monitor::kControlFd;
  a.reply_fd = monitor::kReplyFd;
  for (std::size_t i = 0; i < gpus.step_gpus.size(); ++i) {
    monitor::GpuTarget g;
    g.index = gpus.step_gpus[i];
    // Local rank i drives step GPU i; placement found its bus id when the topology shows it.
    if (i < placement.ranks.size() && placement.ranks[i].gpu && f.topology)
      g.busid = f.topology->gpus[*placement.ranks[i].gpu].busid;
    a.gpus.push_back(g);
  }
  const auto add = [](std::vector<std::string>& list, const std::string& name) {
    if (std::find(list.begin(), list.end(), name) == list.end()) list.push_back(name);
  };
  if (placement.socket_interface) add(a.nets, *placement.socket_interface);
  if (f.topology)
    for (const RankPlacement& r : placement.ranks)
      if (r.nic)
        add(a.ibs, f.topology->nics[r.nic->nic].name + ":" + std::to_string(r.nic->port));
  if (a.nets.empty() && a.ibs.empty())
    for (const NetInterface& i : f.net.interfaces)
      if (i.up && !i.loopback && i.has_ipv4) add(a.nets, i.name);
  return a;
}

}  // namespace ddp::plan
