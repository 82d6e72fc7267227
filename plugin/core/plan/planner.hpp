// The planner: a pure function from (step facts, options, site configuration) to what each task
// of this node gets. It validates the shape of the step against what the user asked for, so a
// wrong allocation fails the step with a message instead of starting a job that hangs.
#pragma once

#include <string>
#include <vector>

#include "ddp/env_contract.hpp"
#include "monitor_plan.hpp"
#include "watch_plan.hpp"
#include "options.hpp"
#include "placement.hpp"
#include "profile.hpp"
#include "port.hpp"
#include "step_facts.hpp"

namespace ddp::plan {

// One variable to export. `overwrite` false: a value the user already set in the job's
// environment wins (OMP_NUM_THREADS, CUDA_DEVICE_ORDER); the rendezvous contract always overwrites,
// because a stale RANK from an outer launcher would be silently wrong.
struct EnvSetting {
  std::string name;
  std::string value;
  bool overwrite = true;
};

struct StepPlan {
  StepFacts facts;
  UserOptions options;
  ResolvedProfile profile;  // this node's view of the chosen profile (empty name: built-in)
  std::string master_addr;
  PortChoice port;
  PortRange port_range;  // the site's (plugstack port_range=, or the profile's): the watch's too
  std::optional<MonitorPlan> monitor;  // --ddp-monitor, or the profile's monitor.enabled
  std::optional<WatchPlan> watch;      // the failure watch, unless --ddp-watch=off
};

struct TaskPlan {
  contract::TaskContract contract;
  std::optional<unsigned> gpu;  // Slurm GPU index this rank drives
  std::string gpu_busid;        // its PCI bus id, when the topology knows it
  std::string nic;              // "mlx5_0:1", when one was chosen
  std::string nic_path;         // NCCL path type GPU->NIC
  CpuList cpus;                 // CPUs to pin the task to; empty = leave Slurm's binding
  unsigned omp_threads = 1;
  std::vector<EnvSetting> env;
  std::optional<unsigned> watch_timeout;  // the failure watch's, when the step has one
  unsigned retries = 0;  // --ddp-retries: new attempts of the job without a failed node
  std::string summary() const;  // one line for --ddp-verbose and logs
};

// Throws PlanError when the step cannot be a DDP step as asked.
// Precedence, lowest first: plugin defaults, the profile, its per-node override, a value the
// user already set in the job's environment (unless the profile forces it), the command line.
StepPlan plan_step(const StepFacts& facts, const UserOptions& options,
                   const PlugstackConfig& config, const ResolvedProfile& profile = {});

// Where every local rank of the node goes (GPU, NIC, CPUs). The same for every task of a node:
// each task computes it from the node's facts, which costs microseconds.
NodePlacement place_node(const StepPlan& step, const GpuFacts& gpus);

// Throws PlanError when the GPUs Slurm gave the step on this node do not fit its ranks (the same
// for every task of the node: slurmstepd checks it once, before the tasks).
void check_node_gpus(const StepPlan& step, const GpuFacts& gpus);

// Throws PlanError when the GPUs Slurm gave do not fit the ranks (check_node_gpus), or when Slurm
// bound the task to GPUs that cuda:LOCAL_RANK cannot name (visible_devices.hpp).
TaskPlan plan_task(const StepPlan& step, const TaskFacts& task, const GpuFacts& gpus,
                   const NodePlacement& placement);

// Every task of the node, for `ddp-plan`; global ids assume Slurm's default block distribution.
// task_visible: the CUDA_VISIBLE_DEVICES Slurm set in every task, when it narrowed them (unset:
// the step's own).
std::vector<TaskPlan> plan_node(const StepPlan& step, const GpuFacts& gpus,
                                const NodePlacement& placement,
                                const std::optional<std::string>& task_visible = std::nullopt);

// How to fix a step whose shape is not the one asked, for error messages: the allocation (the
// cli_filter, or the request) when the job lacks the shape, otherwise the step's own options.
std::string shape_fix_hint(const UserOptions& options, bool job_has_shape);

}  // namespace ddp::plan
