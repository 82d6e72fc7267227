// A made-up environment for Context tests, and a helper that returns an expected error's text.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "ddp/context.hpp"
#include "ddp/error.hpp"

namespace ddp::test {

struct EnvMap {
  std::map<std::string, std::string> vars;

  EnvMap& set(const std::string& name, const std::string& value) {
    vars[name] = value;
    return *this;
  }
  EnvMap& unset(const std::string& name) {
    vars.erase(name);
    return *this;
  }
  EnvLookup lookup() const {
    return [vars = vars](const std::string& name) -> std::optional<std::string> {
      const auto it = vars.find(name);
      if (it == vars.end()) return std::nullopt;
      return it->second;
    };
  }
  Context read() const { return Context::from_environment(lookup()); }
};

// The message of the ddp::Error reading `env` throws; a test failure if it throws none.
inline std::string error_of(const EnvMap& env) {
  try {
    env.read();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no ddp::Error for this environment";
  return "";
}

inline bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// What srun --ddp writes for rank 3 of 8 on the second of 4 nodes (and Slurm's own variables,
// which the plugin's must win over).
inline EnvMap plugin_env() {
  EnvMap e;
  e.set("DDP_LAUNCHER", "spank_ddp 0.1.0")
      .set("RANK", "3").set("LOCAL_RANK", "1").set("WORLD_SIZE", "8")
      .set("LOCAL_WORLD_SIZE", "2").set("GROUP_RANK", "1").set("NODE_RANK", "1")
      .set("DDP_NODES", "4").set("MASTER_ADDR", "n1").set("MASTER_PORT", "24567")
      .set("DDP_BACKEND", "gloo").set("SLURMD_NODENAME", "n2")
      .set("SLURM_PROCID", "3").set("SLURM_LOCALID", "1").set("SLURM_NTASKS", "8")
      .set("SLURM_NODEID", "1").set("SLURM_STEP_NUM_NODES", "4")
      .set("SLURM_STEP_NODELIST", "n[1-4]").set("SLURM_STEP_TASKS_PER_NODE", "2(x4)")
      .set("SLURM_JOB_ID", "77").set("SLURM_STEP_ID", "0");
  return e;
}

// What torchrun --nnodes=2 --nproc-per-node=4 gives rank 5.
inline EnvMap torchrun_env() {
  EnvMap e;
  e.set("RANK", "5").set("LOCAL_RANK", "1").set("WORLD_SIZE", "8")
      .set("LOCAL_WORLD_SIZE", "4").set("GROUP_RANK", "1").set("GROUP_WORLD_SIZE", "2")
      .set("MASTER_ADDR", "10.0.0.1").set("MASTER_PORT", "29500")
      .set("TORCHELASTIC_RUN_ID", "none");
  return e;
}

// What plain `srun -n7 --ntasks-per-node=3` gives task 4 (second node of gn[008-010]).
inline EnvMap slurm_env() {
  EnvMap e;
  e.set("SLURM_PROCID", "4").set("SLURM_LOCALID", "1").set("SLURM_NTASKS", "7")
      .set("SLURM_STEP_NUM_TASKS", "7").set("SLURM_NODEID", "1").set("SLURM_NNODES", "3")
      .set("SLURM_STEP_NUM_NODES", "3").set("SLURM_STEP_NODELIST", "gn[008-010]")
      .set("SLURM_STEP_TASKS_PER_NODE", "3(x2),1").set("SLURM_TASKS_PER_NODE", "3(x2),1")
      .set("SLURM_JOB_ID", "4242").set("SLURM_STEP_ID", "0").set("SLURMD_NODENAME", "gn009");
  return e;
}

}  // namespace ddp::test
