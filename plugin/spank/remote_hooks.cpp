// slurmstepd (remote context): plan once per node in user_init, apply per task in task_init.
#include <sched.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

#include "error.hpp"
#include "monitor_launch.hpp"
#include "parse.hpp"
#include "planner.hpp"
#include "plugin_state.hpp"
#include "preflight.hpp"
#include "preflight_runner.hpp"
#include "profile_choice.hpp"
#include "spank_api.hpp"
#include "step_facts_reader.hpp"
#include "step_role.hpp"
#include "user_chain.hpp"
#include "watch_launch.hpp"

namespace {

using ddp::spank::state;
using ddp::spank::tell_user;
using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

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

// Whether this slurmstepd plans a DDP step: asked for, a task launch, and not made plain by srun.
// Every other step costs the plugin nothing past its options. Throws on a garbled decision.
bool plans_ddp_step(spank_t sp) {
  if (state().deferred_error || !step_wants_ddp()) return false;
  if (!ddp::spank::launch_step_id(sp)) return false;
  const auto role = srun_decision(sp);
  if (role && role->role == ddp::plan::StepRole::Plain) return false;
  if (state().config_error) throw ddp::plan::PlanError(*state().config_error);
  return true;
}

// The user's own profile file, as srun read it and sent it (user_chain.hpp).
ddp::plan::Profile user_profile(spank_t sp, const std::string& path) {
  const auto packed =
      ddp::spank::get_env(sp, ddp::plan::kUserProfileVar, ddp::plan::kMaxUserChainBytes);
  if (!packed)
    throw ddp::plan::PlanError(
        "--ddp-profile=" + ddp::plan::quoted(path) +
        ": srun sent no copy of the file with this step (slurmstepd does not open files that "
        "users name). Fix: start the step with an srun that loads spank_ddp (the cluster's own, "
        "with the same slurm-ddp version as the nodes)");
  return ddp::plan::unpack_user_chain(path, *packed);
}

// Whether this task says the step's deferred error: one task per node, and of a problem every node
// finds alike, node 0's alone. Every task fails; 80,000 saying one line each would bury it.
bool says_deferred_error(spank_t sp, const ddp::spank::DeferredError& e) {
  int local = 0;
  std::uint32_t node = 0;
  if (spank_get_item(sp, S_TASK_ID, &local) != ESPANK_SUCCESS) return true;
  if (local != 0) return false;
  return !e.alike_on_every_node || spank_get_item(sp, S_JOB_NODEID, &node) != ESPANK_SUCCESS || node == 0;
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

// Still root here (user_init runs with the job's user id): the node facts file can be checked
// and, when stale, written again.
extern "C" int slurm_spank_init_post_opt(spank_t sp, int, char**) {
  if (spank_context() != S_CTX_REMOTE) return 0;
  auto& s = state();
  const auto start = Clock::now();
  const int rc = ddp::spank::guarded("init_post_opt", [&] {
    try {
      if (!plans_ddp_step(sp)) return 0;
    } catch (const std::exception& e) {
      // This node's plugstack.conf, which another node's may not share, or srun's garbled
      // decision: said by each node that finds it.
      ddp::spank::defer_error(e);
      return 0;
    }
    ddp::spank::open_monitor_channel(sp);
    ddp::spank::open_watch_channel(sp);
    try {
      s.node = ddp::plan::node_topology(ddp::spank::node_facts_store(s.config),
                                        s.config.topology_xml, /*may_write=*/true);
      // Once the file is current, steps read it and say nothing; a step that had to load hwloc
      // says why in slurmd's log (a refused directory would otherwise be seen only with
      // --ddp-verbose).
      if (!s.node->from_file && !s.config.node_facts_dir.empty())
        ddp::spank::log_info("node topology " + s.node->how);
    } catch (const std::exception& e) {
      // The plan goes on without it, and says so (NCCL and Slurm then choose).
      s.node_problem = std::string("cannot load the node topology: ") + e.what();
    }
    return 0;
  });
  if (rc != 0) ddp::spank::defer_error("internal error while reading the node topology");
  s.work_ms += ms_since(start);
  return 0;
}

extern "C" int slurm_spank_user_init(spank_t sp, int, char**) {
  if (spank_context() != S_CTX_REMOTE) return 0;
  auto& s = state();
  const auto start = Clock::now();
  const int rc = ddp::spank::guarded("user_init", [&] {
    try {
      if (!plans_ddp_step(sp)) return 0;
      const auto role = srun_decision(sp);
      // A step of its own shape (srun --ddp) is not held to the job's --ddp-nodes/--ddp-gpus.
      ddp::plan::UserOptions options = s.options;
      if (role && !role->check_nodes) options.nodes.reset();
      if (role && !role->check_gpus) options.gpus_per_node.reset();
      auto facts = ddp::spank::read_step_facts(sp, s.node, s.node_problem);
      facts.job_has_shape = role && role->job_has_shape;
      if (const auto text = ddp::spank::get_env(sp, ddp::plan::kStepTokenVar))
        if (const auto token = ddp::plan::decode_step_token(*text)) {
          s.watch_key = token->key;
          facts.watch_nonce = token->nonce;
          facts.store_key = token->store_key;
        }
      const auto choice = ddp::plan::choose_profile(
          options, s.config, ddp::spank::get_env(sp, "SLURM_CLUSTER_NAME"), facts.hostname,
          [&](const std::string& path) { return user_profile(sp, path); });
      s.step = ddp::plan::plan_step(facts, options, s.config,
                                    ddp::plan::resolve_for_node(choice, facts.hostname));
      s.gpus = ddp::spank::read_gpu_facts(sp);
      // The node's GPUs against its ranks: one answer for all its tasks, said by its first.
      ddp::plan::check_node_gpus(*s.step, s.gpus);
    } catch (const std::exception& e) {
      ddp::spank::defer_error(e);
    }
    return 0;
  });
  // Even an internal failure here must surface in task_init rather than vanish.
  if (rc != 0) ddp::spank::defer_error("internal error while planning the step");
  s.work_ms += ms_since(start);
  return 0;
}

extern "C" int slurm_spank_task_init(spank_t sp, int, char**) {
  if (spank_context() != S_CTX_REMOTE) return 0;
  return ddp::spank::guarded("task_init", [&] {
    auto& s = state();
    // srun's notes to slurmstepd are no business of the program's.
    (void)spank_unsetenv(sp, ddp::plan::kStepRoleVar);
    (void)spank_unsetenv(sp, ddp::plan::kUserProfileVar);
    (void)spank_unsetenv(sp, ddp::plan::kStepTokenVar);
    if (s.deferred_error) {
      // slurmstepd forwards its errors to the step's stderr: the user sees this line.
      if (says_deferred_error(sp, *s.deferred_error))
        ddp::spank::log_error(s.deferred_error->text.empty() ? "internal error (out of memory)"
                                                             : s.deferred_error->text);
      return -1;
    }
    if (!s.step) return 0;  // not a DDP step, or not a task launch
    const auto start = Clock::now();
    try {
      const auto task = ddp::spank::read_task_facts(sp);
      const auto& gpus = s.gpus;
      const auto placement = ddp::plan::place_node(*s.step, gpus);
      const auto plan = ddp::plan::plan_task(*s.step, task, gpus, placement);
      // A torchrun agent outside (the job's environment) may have left it; no agent serves here.
      (void)spank_unsetenv(sp, ddp::contract::kTorchelasticUseAgentStore);
      const auto no_error_dir =
          s.step->watch ? ddp::spank::prepare_error_dir(*s.step->watch) : std::nullopt;
      if (no_error_dir && task.local_id == 0 && !s.step->watch->error_dir.empty())
        tell_user("warning: the ranks get no TORCHELASTIC_ERROR_FILE on this node: " +
                  *no_error_dir + "; a failure is still named, without its exception");
      for (const auto& e : plan.env) {
        if (no_error_dir && e.name == ddp::contract::kTorchelasticErrorFile) continue;
        const spank_err_t rc = spank_setenv(sp, e.name.c_str(), e.value.c_str(), e.overwrite);
        // ESPANK_ENV_EXISTS is the user's value winning, as intended.
        if (rc != ESPANK_SUCCESS && rc != ESPANK_ENV_EXISTS)
          throw ddp::plan::PlanError("cannot set " + e.name + ": " + spank_strerror(rc));
      }
      pin(plan.cpus);
      // Fallbacks are the same on every task of a node: say them once per node.
      if (task.local_id == 0)
        for (const auto& w : placement.warnings) tell_user("warning: " + w);
      if (s.options.verbose) {
        // The node's share (topology, profile, plan) was paid once, before the first task.
        if (task.local_id == 0 && s.node)
          tell_user("node " + s.step->facts.hostname + ": the plugin's work for this step took " +
                    ddp::plan::ms_text(s.work_ms) + " before the tasks and " +
                    ddp::plan::ms_text(ms_since(start)) + " in this task; topology: " + s.node->how);
        tell_user(plan.summary());
      }
      if (task.local_id == 0) ddp::spank::start_monitor(sp, *s.step, gpus, placement);
      // The preflight sees the environment and CPUs the program will get.
      if (const auto preflight = ddp::plan::plan_preflight(*s.step, s.config))
        if (const auto failed = ddp::spank::run_preflight(sp, *preflight)) {
          ddp::spank::log_error(*failed);
          return -1;
        }
      // Last, for the program: a step the preflight stopped has its own report, and no program
      // whose failure the watch would have to name.
      if (task.local_id == 0) ddp::spank::start_watch(sp, *s.step, s.watch_key);
    } catch (const std::exception& e) {
      ddp::spank::log_error(e.what());
      return -1;
    }
    return 0;
  });
}
