// Plain srun: Slurm's own task variables, with the rendezvous the plugin would have chosen (first
// host of the step, Slurm's reserved port or the port derived from job and step), so a program
// started without --ddp still finds its peers.
#include <cstdint>
#include <optional>
#include <vector>

#include "contract_read.hpp"
#include "ddp/env_contract.hpp"
#include "ddp/error.hpp"
#include "error.hpp"
#include "limits.hpp"
#include "node_list.hpp"
#include "parse.hpp"
#include "port.hpp"
#include "tasks_per_node.hpp"

namespace ddp::detail {
namespace {

namespace c = ddp::contract;

constexpr const char* kNodeList = "SLURM_STEP_NODELIST";

// srun sets the step's own counts; the job's (SLURM_NTASKS, SLURM_NNODES) are the fallback for
// older Slurm, and srun overrides them inside a step anyway.
Named first_count(const EnvReader& env, std::initializer_list<const char*> names) {
  return env.number(env.require_first(names), 1, kMaxWorldSize);
}

std::string master_addr(const EnvReader& env, const std::string& nodelist) {
  if (auto addr = env.get(c::kMasterAddr)) {  // the job script's choice wins
    check_master_addr(env, c::kMasterAddr, *addr);
    return *addr;
  }
  try {
    return plan::first_host(kNodeList, nodelist);
  } catch (const plan::PlanError& e) {
    env.fail(e.what());
  }
}

std::uint16_t master_port(const EnvReader& env) {
  if (env.get(c::kMasterPort)) return read_port(env, c::kMasterPort);
  const auto job = env.require("SLURM_JOB_ID");
  const auto step = env.require("SLURM_STEP_ID");
  const auto job_id = env.parse("SLURM_JOB_ID", job, 0, UINT32_MAX);
  const auto step_id = env.parse("SLURM_STEP_ID", step, 0, UINT32_MAX);
  try {
    // The plugin's rule with the plugin's default range: a site that changed port_range in
    // plugstack.conf gets another port from spank_ddp, but every task here agrees on this one.
    return plan::choose_port(job_id, step_id, env.get("SLURM_STEP_RESV_PORTS"), std::nullopt,
                             plan::PortRange{})
        .port;
  } catch (const plan::PlanError& e) {
    env.fail(e.what());
  }
}

}  // namespace

EnvReader slurm_reader(const EnvLookup& env) {
  return EnvReader(env, "Slurm contract",
                   "srun sets it for every task it starts. Start the program with srun (or "
                   "srun --ddp, or torchrun).",
                   "Slurm's variables disagree; was one exported by hand? Unset it and let srun "
                   "set them.");
}

RawContract read_slurm(const EnvReader& env) {
  // The batch script's own shell has SLURM_PROCID too, but no step node list: say so first.
  const auto nodelist = env.get(kNodeList);
  if (!nodelist)
    env.fail(std::string(kNodeList) +
             " is not set, though SLURM_PROCID is: this process is not a task of an srun step "
             "(is it the batch script itself?). Start it with srun, srun --ddp or torchrun.");

  RawContract out;
  out.source = ContractSource::Slurm;
  out.rank = env.number("SLURM_PROCID", 0, kMaxWorldSize - 1);
  out.local_rank = env.number("SLURM_LOCALID", 0, kMaxWorldSize - 1);
  out.world_size = first_count(env, {"SLURM_STEP_NUM_TASKS", "SLURM_NTASKS"});
  out.node_rank = env.number("SLURM_NODEID", 0, kMaxWorldSize - 1);
  out.nodes = first_count(env, {"SLURM_STEP_NUM_NODES", "SLURM_NNODES"});

  const std::string tasks_name =
      env.require_first({"SLURM_STEP_TASKS_PER_NODE", "SLURM_TASKS_PER_NODE"});
  const std::string tasks_text = env.require(tasks_name);
  std::vector<unsigned> per_node;
  try {
    per_node = expand_tasks_per_node(tasks_name, tasks_text, plan::kMaxNodes);
  } catch (const plan::PlanError& e) {
    env.fail(e.what());
  }
  std::uint64_t listed = 0;
  for (unsigned n : per_node) listed += n;
  const std::string shown = tasks_name + "=" + plan::quoted(tasks_text);
  if (per_node.size() != out.nodes.value)
    env.fail_mismatch(out.nodes.shown() + " but " + shown + " lists " +
                      std::to_string(per_node.size()) + " nodes.");
  if (listed != out.world_size.value)
    env.fail_mismatch(out.world_size.shown() + " but " + shown + " adds up to " +
                      std::to_string(listed) + " tasks.");
  env.check_below(out.node_rank, out.nodes, "node indices");
  out.local_world_size = {tasks_name, per_node[out.node_rank.value],
                          "this node's entry in '" + tasks_text + "'"};

  out.master_addr = master_addr(env, *nodelist);
  out.master_port = master_port(env);
  return out;
}

}  // namespace ddp::detail
