// The plugin's state inside one srun, sbatch, salloc or slurmstepd process. Each such process
// serves exactly one command or one step on one node, so one instance is enough.
#pragma once

#include <exception>
#include <optional>
#include <string>

#include "node_facts_cache.hpp"
#include "options.hpp"
#include "planner.hpp"
#include "spank_api.hpp"
#include "step_role.hpp"

namespace ddp::spank {

// A step's first problem in slurmstepd, and whether every node finds it alike
// (plan::StepWideError): one task says it per node, and of those alike, node 0's alone.
struct DeferredError {
  std::string text;
  bool alike_on_every_node = false;
};

// Keeps the step's first problem: `e`, or (no exception at hand) `text`.
void defer_error(const std::exception& e, bool alike_on_every_node = false) noexcept;
void defer_error(const char* text) noexcept;

struct PluginState {
  plan::PlugstackConfig config;
  // A plugstack.conf error: every DDP step and every --ddp* option fails with it; plain steps,
  // and slurmd, run on (one mistyped argument must not take a whole cluster's srun down).
  std::optional<std::string> config_error;
  plan::UserOptions options;
  // In slurmstepd the first problem is kept here and reported from task_init: errors returned
  // from user_init never reach the user (Slurm bug 7573).
  std::optional<DeferredError> deferred_error;
  std::optional<plan::StepPlan> step;
  // The step's GPUs on this node, read in user_init: each task's GRES variables are narrowed to
  // its own GPUs under --gpus-per-task or --gpu-bind before task_init.
  plan::GpuFacts gpus;
  // slurmstepd, DDP steps only: the node's topology, read as root in init_post_opt (from the node
  // facts file, or hwloc), or why there is none; and the plugin's own time for the step so far.
  std::optional<plan::NodeTopology> node;
  std::string node_problem;
  double work_ms = 0;
  // The failure watch's key for this step, from srun (watch_plan.hpp); "" without one.
  std::string watch_key;

  // srun only: which options its own command line gave, and the job it runs in (read at init,
  // before srun rewrites the task layout variables for its step).
  plan::CommandLineOptions command_line;
  std::optional<plan::JobShape> job;
};

PluginState& state();

// The node facts file as plugstack.conf places it ("" dir: node_facts_dir=off).
plan::NodeFactsStore node_facts_store(const plan::PlugstackConfig& config);

// slurmd only, from slurm_spank_init: the node facts file made at the daemon's start, so the
// first step finds it. Failures are logged, never fatal: steps then load hwloc themselves.
void slurmd_started();

// srun only, from slurm_spank_init: srun rewrites SLURM_TASKS_PER_NODE for its step before
// local_user_init, so the job's layout is read before option processing starts.
void remember_job_shape();

inline constexpr const char* kLogPrefix = "spank_ddp: ";

// In a task: a line on its stderr (srun's terminal or the job's output), after kLogPrefix.
void tell_user(const std::string& line);

// A line in Slurm's log (slurmd's, or srun's stderr), after kLogPrefix. Users write parts of
// every message (a path, a value, an exception), so control characters are escaped: another
// user's bytes never reach an admin's terminal as commands (printable.hpp).
void log_error(const std::string& line);
void log_info(const std::string& line);

// Runs a hook body; any exception becomes a logged error and a Slurm error code, so nothing ever
// unwinds into Slurm's C code.
template <class Body>
int guarded(const char* hook, Body&& body) noexcept {
  try {
    return body();
  } catch (const std::exception& e) {
    log_error(std::string(hook) + ": " + e.what());
  } catch (...) {
    log_error(std::string(hook) + ": unexpected internal error");
  }
  return -1;
}

}  // namespace ddp::spank
