// srun (local context): decide once per step whether it is a DDP step (step_role.hpp) and hand
// the decision to slurmstepd through the step's environment.
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>

#include "plugin_state.hpp"
#include "profile_choice.hpp"
#include "spank_api.hpp"
#include "step_role.hpp"
#include "watch_plan.hpp"
#include "tasks_per_node.hpp"
#include "user_chain.hpp"

namespace {

using ddp::spank::state;

// In this srun's environment: the allocation it runs in, as sbatch or salloc described it.
std::optional<ddp::plan::JobShape> job_from_environment() {
  if (!std::getenv("SLURM_JOB_ID")) return std::nullopt;  // srun allocates for itself
  const char* layout = std::getenv("SLURM_TASKS_PER_NODE");
  if (!layout) return std::nullopt;
  try {
    return ddp::plan::JobShape{
        ddp::detail::expand_tasks_per_node("SLURM_TASKS_PER_NODE", layout, ddp::plan::kMaxNodes)};
  } catch (const std::exception&) {
    return std::nullopt;  // unreadable: every step stays strict, as without a job
  }
}

std::uint32_t step_item(spank_t sp, spank_item_t which) {
  std::uint32_t value = 0;
  if (spank_get_item(sp, which, &value) != ESPANK_SUCCESS) return 0;
  return value;
}

}  // namespace

namespace ddp::spank {

void remember_job_shape() { state().job = job_from_environment(); }

}  // namespace ddp::spank

extern "C" int slurm_spank_local_user_init(spank_t sp, int, char**) {
  if (spank_context() != S_CTX_LOCAL) return 0;
  return ddp::spank::guarded("local_user_init", [&] {
    auto& s = state();
    // Every step that may become a DDP step gets its secrets (watch_plan.hpp): from here they
    // reach slurmstepd on each node in the step's environment, and the tasks only as the plugin
    // passes them on.
    const bool may_be_ddp = !s.options.off && (s.options.requested ||
                                               s.config.activation == ddp::plan::Activation::Always);
    if (may_be_ddp) {
      const auto token = ddp::plan::encode_step_token(ddp::plan::new_step_token());
      if (setenv(ddp::plan::kStepTokenVar, token.c_str(), 1) != 0)
        throw std::runtime_error("cannot set " + std::string(ddp::plan::kStepTokenVar));
    }
    if (!s.options.requested) return 0;
    ddp::plan::StepRoleInput in;
    in.options = s.options;
    in.command_line = s.command_line;
    in.job = s.job;
    in.step.nodes = step_item(sp, S_JOB_NNODES);
    in.step.tasks = step_item(sp, S_JOB_TOTAL_TASK_COUNT);
    const auto decision = ddp::plan::decide_step_role(in);
    // srun copies its environment into the step's (SLURM_* even under --export=NONE).
    if (setenv(ddp::plan::kStepRoleVar, ddp::plan::encode_step_role(decision).c_str(), 1) != 0)
      throw std::runtime_error("cannot set " + std::string(ddp::plan::kStepRoleVar));
    // A user's own profile is read here, with the user's rights, and travels with the step.
    if (s.options.profile_file && decision.role == ddp::plan::StepRole::Ddp && !s.config_error) {
      try {
        ddp::plan::check_user_profile_allowed(s.options, s.config);
        const std::string packed = ddp::plan::pack_user_chain(*s.options.profile_file);
        if (setenv(ddp::plan::kUserProfileVar, packed.c_str(), 1) != 0)
          throw std::runtime_error("cannot set " + std::string(ddp::plan::kUserProfileVar));
      } catch (const std::exception& e) {
        ddp::spank::log_error(e.what());
        return -1;
      }
    }
    if (s.options.verbose)
      ddp::spank::log_info(decision.reason);
    return 0;
  });
}
