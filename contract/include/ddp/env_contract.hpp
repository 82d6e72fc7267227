// The environment contract between the launcher (spank_ddp) and a training process.
//
// One definition, used by the plugin to write it and by the runtime to read it. The names are
// torchrun's, so any torchrun-compatible program (Python included) runs unchanged; the DDP_*
// names say what the plugin decided, for logs, for `ddp-plan` and for the runtime.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ddp::contract {

// torchrun's rendezvous contract.
inline constexpr const char* kRank = "RANK";
inline constexpr const char* kLocalRank = "LOCAL_RANK";
inline constexpr const char* kWorldSize = "WORLD_SIZE";
inline constexpr const char* kLocalWorldSize = "LOCAL_WORLD_SIZE";
inline constexpr const char* kGroupRank = "GROUP_RANK";  // torchrun's name for the node index
inline constexpr const char* kNodeRank = "NODE_RANK";    // the same value, the name most scripts read
inline constexpr const char* kMasterAddr = "MASTER_ADDR";
inline constexpr const char* kMasterPort = "MASTER_PORT";

// The rest of what torchrun's agent gives each worker (torch 2.6, torch/distributed/elastic/agent/
// server/local_elastic_agent.py, _start_workers; start_processes adds the error file), with
// torchrun's meaning. One role ("default", torchrun's --role), so the role's rank and size are
// the step's; a group is a node.
inline constexpr const char* kGroupWorldSize = "GROUP_WORLD_SIZE";  // nodes in the step
inline constexpr const char* kRoleRank = "ROLE_RANK";                // = RANK
inline constexpr const char* kRoleWorldSize = "ROLE_WORLD_SIZE";     // = WORLD_SIZE
inline constexpr const char* kRoleName = "ROLE_NAME";
inline constexpr const char* kDefaultRoleName = "default";
// The same on every rank of a step and different for every step and job: "JOB.STEP". Its
// presence is what torch.distributed.is_torchelastic_launched() tests.
inline constexpr const char* kTorchelasticRunId = "TORCHELASTIC_RUN_ID";
inline constexpr const char* kTorchelasticRestartCount = "TORCHELASTIC_RESTART_COUNT";  // requeues
inline constexpr const char* kTorchelasticMaxRestarts = "TORCHELASTIC_MAX_RESTARTS";    // 0: none
// Where torch's @record writes the rank's exception, for the failure watch to report.
inline constexpr const char* kTorchelasticErrorFile = "TORCHELASTIC_ERROR_FILE";
// NCCL errors and time-outs end the process instead of hanging it: the name since torch 2.2, and
// the one torch 1.x reads.
inline constexpr const char* kTorchNcclAsyncErrorHandling = "TORCH_NCCL_ASYNC_ERROR_HANDLING";
inline constexpr const char* kNcclAsyncErrorHandling = "NCCL_ASYNC_ERROR_HANDLING";
// Never set, and removed from tasks: torchrun sets it when its agent serves the store at
// MASTER_ADDR:MASTER_PORT, and a program told so waits for an agent that does not exist here.
inline constexpr const char* kTorchelasticUseAgentStore = "TORCHELASTIC_USE_AGENT_STORE";

// Library settings the plugin decides per task.
inline constexpr const char* kOmpNumThreads = "OMP_NUM_THREADS";
inline constexpr const char* kCudaDeviceOrder = "CUDA_DEVICE_ORDER";
inline constexpr const char* kCudaVisibleDevices = "CUDA_VISIBLE_DEVICES";

// What the plugin decided, so a job log shows it and the runtime need not guess.
inline constexpr const char* kDdpBackend = "DDP_BACKEND";          // nccl | gloo
inline constexpr const char* kDdpNodes = "DDP_NODES";              // nodes in the step
inline constexpr const char* kDdpGpu = "DDP_GPU";                  // Slurm GPU index this rank drives
inline constexpr const char* kDdpStepGpus = "DDP_STEP_GPUS";       // Slurm GPU indices of the step here
inline constexpr const char* kDdpPortSource = "DDP_PORT_SOURCE";   // reserved | derived | option
inline constexpr const char* kDdpLauncher = "DDP_LAUNCHER";        // "spank_ddp <version>"
inline constexpr const char* kDdpGpuBusId = "DDP_GPU_BUSID";       // PCI bus id of that GPU
inline constexpr const char* kDdpNic = "DDP_NIC";                  // "mlx5_0:1 PIX": NIC and path
inline constexpr const char* kDdpCpus = "DDP_CPUS";                // CPUs the task is pinned to
inline constexpr const char* kDdpProfile = "DDP_PROFILE";          // cluster profile, or "none"
inline constexpr const char* kDdpWatch = "DDP_WATCH";              // the failure watch's time-out (s)

// The network settings the plugin derives from the topology and the profile; a value the user set
// wins, and a profile may not set them (it names interfaces and HCAs in its network section).
inline constexpr const char* kNcclIbHca = "NCCL_IB_HCA";
inline constexpr const char* kNcclSocketIfname = "NCCL_SOCKET_IFNAME";
inline constexpr const char* kGlooSocketIfname = "GLOO_SOCKET_IFNAME";

// libddp's own settings, in seconds, read by ProcessGroup::create.
inline constexpr const char* kDdpRendezvousTimeout = "DDP_RENDEZVOUS_TIMEOUT";
inline constexpr const char* kDdpTimeout = "DDP_TIMEOUT";
inline constexpr const char* kDdpPeerTimeout = "DDP_PEER_TIMEOUT";  // 0: the watch is off
// 1: each node's LOCAL_RANK 0 relays its node's store requests to rank 0 (a switch, not seconds).
inline constexpr const char* kDdpStoreRelay = "DDP_STORE_RELAY";
// The step's secret (kStoreKeyHexDigits lowercase hex digits), which srun draws per step and the
// plugin gives every task of the step: libddp seals what it puts in the rendezvous store with it
// and names its node relay after it. A process's environment is its owner's to read (and
// root's), so another user of the node never sees it; it is never printed.
inline constexpr const char* kDdpStoreKey = "DDP_STORE_KEY";
inline constexpr std::size_t kStoreKeyHexDigits = 64;

// Every name the plugin may write: the batch step and foreign launchers must never see stale ones
// (the plugin unsets them there; a step a task starts without the plugin keeps what it inherits).
inline const std::vector<std::string>& rank_variable_names() {
  static const std::vector<std::string> names = {
      kRank,       kLocalRank,    kWorldSize,    kLocalWorldSize, kGroupRank,
      kNodeRank,   kMasterAddr,   kMasterPort,   kDdpBackend,     kDdpNodes,
      kDdpGpu,     kDdpStepGpus,  kDdpPortSource, kDdpLauncher,    kDdpGpuBusId,
      kDdpNic,     kDdpCpus,      kDdpProfile,   kDdpWatch,       kGroupWorldSize,
      kRoleRank,   kRoleWorldSize, kTorchelasticRunId, kTorchelasticRestartCount,
      kTorchelasticMaxRestarts, kTorchelasticErrorFile, kTorchelasticUseAgentStore, kDdpStoreKey};
  return names;
}

enum class Backend { Nccl, Gloo };

inline const char* backend_name(Backend b) { return b == Backend::Nccl ? "nccl" : "gloo"; }

// The one spelling of each backend, for --ddp-backend, DDP_BACKEND and ProcessGroupOptions alike;
// nullopt for any other text.
inline std::optional<Backend> backend_from_name(std::string_view name) {
  if (name == "nccl") return Backend::Nccl;
  if (name == "gloo") return Backend::Gloo;
  return std::nullopt;
}

// One task's side of the contract, as values. to_env() renders it in a stable order.
struct TaskContract {
  unsigned rank = 0;
  unsigned local_rank = 0;
  unsigned world_size = 1;
  unsigned local_world_size = 1;
  unsigned node_rank = 0;
  unsigned nodes = 1;
  std::string master_addr;
  unsigned master_port = 0;
  Backend backend = Backend::Gloo;
  std::string run_id;          // "JOB.STEP"
  unsigned restart_count = 0;  // how often Slurm requeued the job

  std::vector<std::pair<std::string, std::string>> to_env() const {
    return {
        {kRank, std::to_string(rank)},
        {kLocalRank, std::to_string(local_rank)},
        {kWorldSize, std::to_string(world_size)},
        {kLocalWorldSize, std::to_string(local_world_size)},
        {kGroupRank, std::to_string(node_rank)},
        {kNodeRank, std::to_string(node_rank)},
        {kMasterAddr, master_addr},
        {kMasterPort, std::to_string(master_port)},
        {kDdpBackend, backend_name(backend)},
        {kDdpNodes, std::to_string(nodes)},
        {kGroupWorldSize, std::to_string(nodes)},
        {kRoleRank, std::to_string(rank)},
        {kRoleWorldSize, std::to_string(world_size)},
        {kTorchelasticRunId, run_id},
        {kTorchelasticRestartCount, std::to_string(restart_count)},
        {kTorchelasticMaxRestarts, "0"},
    };
  }
};

// torchrun's settings a worker gets unless its environment (or the site's profile) says
// otherwise.
inline std::vector<std::pair<std::string, std::string>> torchrun_defaults() {
  return {{kRoleName, kDefaultRoleName},
          {kTorchNcclAsyncErrorHandling, "1"},
          {kNcclAsyncErrorHandling, "1"}};
}

}  // namespace ddp::contract
