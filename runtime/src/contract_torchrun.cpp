// torchrun's variables, read two ways: strictly when spank_ddp wrote them (it writes them all),
// leniently when torchrun or another torchrun-compatible launcher did (older ones omit some).
#include "contract_read.hpp"
#include "ddp/env_contract.hpp"

namespace ddp::detail {
namespace {

namespace c = ddp::contract;

constexpr const char* kGroupWorldSize = "GROUP_WORLD_SIZE";  // torchrun's node count

Named index(const EnvReader& env, const std::string& name) {
  return env.number(name, 0, kMaxWorldSize - 1);
}

Named count(const EnvReader& env, const std::string& name) {
  return env.number(name, 1, kMaxWorldSize);
}

void read_rendezvous(const EnvReader& env, RawContract& out) {
  out.master_addr = env.require(c::kMasterAddr);
  check_master_addr(env, c::kMasterAddr, out.master_addr);
  out.master_port = read_port(env, c::kMasterPort);
}

// GROUP_RANK is torchrun's own name; NODE_RANK is what scripts export for `torchrun --node-rank`.
std::optional<std::string> node_rank_name(const EnvReader& env) {
  return env.first_set({c::kGroupRank, c::kNodeRank});
}

}  // namespace

EnvReader plugin_reader(const EnvLookup& env) {
  const std::string launcher = env(c::kDdpLauncher).value_or("");
  return EnvReader(
      env, "spank_ddp contract",
      "DDP_LAUNCHER='" + launcher +
          "' says srun --ddp started this task, and the plugin sets it for every task. A wrapper "
          "script must have removed it: keep the plugin's variables, or unset DDP_LAUNCHER to use "
          "torchrun's or plain Slurm's.",
      "The plugin writes consistent values; something changed them after launch. Do not override "
      "the plugin's variables, or unset DDP_LAUNCHER to use torchrun's or plain Slurm's.");
}

EnvReader torchrun_reader(const EnvLookup& env) {
  return EnvReader(
      env, "torchrun contract",
      "a torchrun-compatible launcher sets RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR and "
      "MASTER_PORT together. Launch with torchrun (or srun --ddp), or set the missing variable.",
      "Check the launcher's command line, and look for a RANK, WORLD_SIZE or LOCAL_WORLD_SIZE "
      "exported by the job script.");
}

RawContract read_plugin(const EnvReader& env) {
  RawContract out;
  out.source = ContractSource::Plugin;
  out.rank = index(env, c::kRank);
  out.local_rank = index(env, c::kLocalRank);
  out.world_size = count(env, c::kWorldSize);
  out.local_world_size = count(env, c::kLocalWorldSize);
  out.node_rank = index(env, env.require_first({c::kGroupRank, c::kNodeRank}));
  out.nodes = count(env, c::kDdpNodes);
  read_rendezvous(env, out);
  return out;
}

RawContract read_torchrun(const EnvReader& env) {
  RawContract out;
  out.source = ContractSource::Torchrun;
  out.world_size = count(env, c::kWorldSize);
  out.rank = index(env, c::kRank);
  out.local_rank = index(env, c::kLocalRank);
  const unsigned world = out.world_size.value;

  std::optional<Named> groups;
  if (env.get(kGroupWorldSize)) groups = count(env, kGroupWorldSize);

  // Without LOCAL_WORLD_SIZE: torchrun runs the same number of ranks on every node.
  if (env.get(c::kLocalWorldSize)) {
    out.local_world_size = count(env, c::kLocalWorldSize);
  } else if (groups) {
    if (world % groups->value != 0)
      env.fail_mismatch(std::string(c::kLocalWorldSize) + " is not set, and " +
                        out.world_size.shown() + " does not split evenly over " +
                        groups->shown() + " nodes. Set " + c::kLocalWorldSize + ".");
    out.local_world_size = {c::kLocalWorldSize, world / groups->value,
                            "unset; taken as WORLD_SIZE / GROUP_WORLD_SIZE"};
  } else {
    out.local_world_size = {c::kLocalWorldSize, world, "unset; taken as WORLD_SIZE: one node"};
  }
  const unsigned per_node = out.local_world_size.value;

  if (auto name = node_rank_name(env))
    out.node_rank = index(env, *name);
  else
    out.node_rank = {c::kGroupRank, out.rank.value / per_node,
                     "unset; taken as RANK / LOCAL_WORLD_SIZE"};

  if (groups)
    out.nodes = *groups;
  else
    out.nodes = {kGroupWorldSize, (world + per_node - 1) / per_node,
                 "unset; taken as WORLD_SIZE / LOCAL_WORLD_SIZE, rounded up"};

  read_rendezvous(env, out);
  return out;
}

}  // namespace ddp::detail
