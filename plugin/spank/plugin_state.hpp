// The plugin's state inside one srun, sbatch, salloc or slurmstepd process. Each such process
// serves exactly one command or one step on one node, so one instance is enough.
#pragma once

#include <exception>
#include <optional>
#include <string>

#include "options.hpp"
#include "planner.hpp"
#include "spank_api.hpp"
#include "step_role.hpp"

namespace ddp::spank {

struct PluginState {
  plan::PlugstackConfig config;
  plan::UserOptions options;
  // In slurmstepd the first problem is kept here and reported from task_init: errors returned
  // from user_init never reach the user (Slurm bug 7573).
  std::optional<std::string> deferred_error;
  std::optional<plan::StepPlan> step;

  // srun only: which options its own command line gave, and the job it runs in (read at init,
  // before srun rewrites the task layout variables for its step).
  plan::CommandLineOptions command_line;
  std::optional<plan::JobShape> job;
};

PluginState& state();

// srun only, from slurm_spank_init: srun rewrites SLURM_TASKS_PER_NODE for its step before
// local_user_init, so the job's layout is read before option processing starts.
void remember_job_shape();

inline constexpr const char* kLogPrefix = "spank_ddp: ";

// Runs a hook body; any exception becomes a logged error and a Slurm error code, so nothing ever
// unwinds into Slurm's C code.
template <class Body>
int guarded(const char* hook, Body&& body) noexcept {
  try {
    return body();
  } catch (const std::exception& e) {
    slurm_error("spank_ddp: %s: %s", hook, e.what());
  } catch (...) {
    slurm_error("spank_ddp: %s: unexpected internal error", hook);
  }
  return -1;
}

}  // namespace ddp::spank
