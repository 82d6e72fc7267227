// --ddp-monitor in the plan: whether this step is sampled and how (the option over the profile's
// `monitor:`), and the sampler's command line for this node, which local task 0 starts
// (plugin/spank/monitor_launch.cpp; the sampler is monitor/sample/).
#pragma once

#include <optional>
#include <string>

#include "options.hpp"
#include "placement.hpp"
#include "profile.hpp"
#include "sampler_args.hpp"
#include "step_facts.hpp"

namespace ddp::plan {

struct StepPlan;

struct MonitorPlan {
  unsigned interval = monitor::kDefaultInterval;  // seconds
  std::optional<std::string> dir;  // the profile's pattern; unset: the job's working directory
  std::string reason;              // "--ddp-monitor=5", "profile vega (monitor.enabled)"
};

// --ddp-monitor[=S] wins; --ddp-monitor=off turns off what the profile enables.
std::optional<MonitorPlan> plan_monitor(const UserOptions& options, const ResolvedProfile& profile);

// The sampler's program: plugstack.conf's monitor=, else where the package installs it.
std::string monitor_program(const PlugstackConfig& config);

// What this node's sampler is told: the step's GPUs (with their bus ids where the topology knows
// them), the NICs the plan chose (the socket interface and each rank's HCA port; when it chose
// none, every interface that is up with an address), and the control channel's fd.
monitor::SamplerArgs sampler_args(const StepPlan& step, const MonitorPlan& plan,
                                  const GpuFacts& gpus, const NodePlacement& placement);

}  // namespace ddp::plan
