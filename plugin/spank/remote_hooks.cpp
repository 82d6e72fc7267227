// slurmstepd (remote context): plan once per node in user_init, apply per task in task_init.
#include <sched.h>
#include <unistd.h>

#include <cstdio>
#include <optional>
#include <string>

#include "error.hpp"
#include "planner.hpp"
#include "preflight.hpp"
#include "preflight_runner.hpp"
#include "profile_choice.hpp"
#include "plugin_state.hpp"
#include "spank_api.hpp"
#include "step_facts_reader.hpp"
#include "step_role.hpp"
#include "user_file_reader.hpp"

namespace {

using ddp::spank::state;

bool step_wants_ddp() {
  const auto& s = state();
  if (s.options.off) return false;
  return s.options.requested || s.config.activation == ddp::plan::Activation::Always;
}

// srun's decision for this step (step_role.hpp); none from an srun without the plugin, or when
// no option asked for DDP (activate=always): then the step is held to every option in force.
std::optional<ddp::plan::StepRoleDecision> srun_decision(spank_t sp) {
  const auto text = ddp::spank::get_env(sp, ddp::plan::kStepRoleVar);
  if (!text) return std::nullopt;
  return ddp::plan::decode_step_role(*text);
}

// The task's stderr goes to srun's terminal or the job's output file.
void tell_user(const std::string& line) {
  const std::string text = std::string(ddp::spank::kLogPrefix) + line + "\n";
  (void)!write(STDERR_FILENO, text.data(), text.size());
}

void pin(const ddp::plan::CpuList& cpus) {
  if (cpus.empty()) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  for (unsigned c : cpus)
    if (c < CPU_SETSIZE) CPU_SET(c, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0)
    throw ddp::plan::PlanError("cannot pin the task to CPUs " + ddp::plan::format_cpu_list(cpus) +
                               "; use --ddp-bind=none to keep Slurm's binding");
}

}  // namespace

extern "C" int slurm_spank_user_init(spank_t sp, int, char**) {
  if (spank_context() != S_CTX_REMOTE) return 0;
  auto& s = state();
  const int rc = ddp::spank::guarded("user_init", [&] {
    if (s.deferred_error || !step_wants_ddp()) return 0;
    if (!ddp::spank::launch_step_id(sp)) return 0;
    try {
      const auto role = srun_decision(sp);
      if (role && role->role == ddp::plan::StepRole::Plain) return 0;
      // A step of its own shape (srun --ddp) is not held to the job's --ddp-nodes/--ddp-gpus.
      ddp::plan::UserOptions options = s.options;
      if (role && !role->check_nodes) options.nodes.reset();
      if (role && !role->check_gpus) options.gpus_per_node.reset();
      auto facts = ddp::spank::read_step_facts(sp, s.config);
      facts.job_has_shape = role && role->job_has_shape;
      uid_t uid = 0;
      gid_t gid = 0;
      if (spank_get_item(sp, S_JOB_UID, &uid) != ESPANK_SUCCESS ||
          spank_get_item(sp, S_JOB_GID, &gid) != ESPANK_SUCCESS)
        throw ddp::plan::PlanError("cannot read the job's user from Slurm");
      const auto choice = ddp::plan::choose_profile(
          options, s.config, ddp::spank::get_env(sp, "SLURM_CLUSTER_NAME"), facts.hostname,
          [&](const std::string& path) { return ddp::spank::read_profile_as_user(uid, gid, path); });
      s.step = ddp::plan::plan_step(facts, options, s.config,
                                    ddp::plan::resolve_for_node(choice, facts.hostname));
    } catch (const std::exception& e) {
      s.deferred_error = e.what();
    }
    return 0;
  });
  // Even an internal failure here must surface in task_init rather than vanish.
  if (rc != 0 && !s.deferred_error) s.deferred_error = "internal error while planning the step";
  return 0;
}

extern "C" int slurm_spank_task_init(spank_t sp, int, char**) {
  if (spank_context() != S_CTX_REMOTE) return 0;
  return ddp::spank::guarded("task_init", [&] {
    auto& s = state();
    // srun's note to slurmstepd is no business of the program's.
    (void)spank_unsetenv(sp, ddp::plan::kStepRoleVar);
    if (s.deferred_error) {
      // slurmstepd forwards its errors to the step's stderr: the user sees this line.
      slurm_error("spank_ddp: %s", s.deferred_error->c_str());
      return -1;
    }
    if (!s.step) return 0;  // not a DDP step, or not a task launch
    try {
      const auto task = ddp::spank::read_task_facts(sp);
      const auto gpus = ddp::spank::read_gpu_facts(sp);
      const auto placement = ddp::plan::place_node(*s.step, gpus);
      const auto plan = ddp::plan::plan_task(*s.step, task, gpus, placement);
      for (const auto& e : plan.env) {
        const spank_err_t rc = spank_setenv(sp, e.name.c_str(), e.value.c_str(), e.overwrite);
        // ESPANK_ENV_EXISTS is the user's value winning, as intended.
        if (rc != ESPANK_SUCCESS && rc != ESPANK_ENV_EXISTS)
          throw ddp::plan::PlanError("cannot set " + e.name + ": " + spank_strerror(rc));
      }
      pin(plan.cpus);
      // Fallbacks are the same on every task of a node: say them once per node.
      if (task.local_id == 0)
        for (const auto& w : placement.warnings) tell_user("warning: " + w);
      if (s.options.verbose) tell_user(plan.summary());
      // Last: the preflight sees the environment and CPUs the program will get.
      if (const auto preflight = ddp::plan::plan_preflight(*s.step, s.config))
        if (const auto failed = ddp::spank::run_preflight(sp, *preflight)) {
          slurm_error("spank_ddp: %s", failed->c_str());
          return -1;
        }
    } catch (const std::exception& e) {
      slurm_error("spank_ddp: %s", e.what());
      return -1;
    }
    return 0;
  });
}
