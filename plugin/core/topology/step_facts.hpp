// The facts the planner works from. The SPANK glue reads them from Slurm; `ddp-plan` and the
// unit tests make them up. Nothing here knows about SPANK.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "net_facts.hpp"
#include "topology.hpp"

namespace ddp::plan {

// Known once per node per step (slurmstepd's user_init).
struct StepFacts {
  std::uint32_t job_id = 0;
  std::uint32_t step_id = 0;
  unsigned nodes = 1;        // nodes in the step
  unsigned node_id = 0;      // this node's index in the step
  unsigned total_tasks = 1;  // tasks in the step
  unsigned local_tasks = 1;  // tasks of the step on this node
  std::string nodelist;      // SLURM_STEP_NODELIST, Slurm host list syntax
  std::string hostname;      // this node, for messages
  std::optional<std::string> resv_ports;  // SLURM_STEP_RESV_PORTS, when MpiParams=ports= is set
  unsigned restart_count = 0;             // how often Slurm requeued the job (S_SLURM_RESTART_COUNT)
  // The failure watch: srun's per-step nonce for the ranks' error file directory (unset from an
  // srun without the plugin), and where that directory goes (the task's TMPDIR, else /tmp).
  std::optional<std::string> watch_nonce;
  // The step's secret from srun's token (contract::kDdpStoreKey), for every task; unset from an
  // srun without the plugin.
  std::optional<std::string> store_key;
  std::string tmpdir = "/tmp";
  // srun found that the job's allocation has the asked DDP shape: a mismatch is then this step's
  // own, and the fix is --ddp=off or srun --ddp, not the cli_filter.
  bool job_has_shape = false;
  unsigned cpus_on_node = 1;              // CPUs the step holds on this node
  CpuList allowed_cpus;  // the step's CPUs here: its cores (alloc_cores) within slurmstepd's affinity
  // S_STEP_ALLOC_CORES: Slurm's ids of the step's cores on this node ("0-1,4"); unset in ddp-plan
  // without --alloc-cores, where allowed_cpus is all the step holds.
  std::optional<std::string> alloc_cores;
  // Why alloc_cores could not be mapped to CPUs ("" when it could): tasks then keep the CPUs
  // Slurm bound them to, never the whole node (core_grant.hpp).
  std::string cpu_grant_problem;
  std::optional<Topology> topology;       // unset when it could not be loaded
  std::string topology_problem;           // why not, for the user
  NetFacts net;
};

// The step's GPUs on this node, as slurmstepd set them for the whole step (user_init): per-task
// GPU binding narrows both variables in each task's environment before task_init
// (visible_devices.hpp), so a task no longer sees the step's.
struct GpuFacts {
  std::vector<unsigned> step_gpus;     // SLURM_STEP_GPUS: Slurm's node-wide indices
  std::optional<std::string> visible;  // CUDA_VISIBLE_DEVICES for the step
};

struct TaskFacts {
  unsigned local_id = 0;
  unsigned global_id = 0;
  std::optional<std::string> visible = std::nullopt;  // CUDA_VISIBLE_DEVICES Slurm set for it
};

}  // namespace ddp::plan
