// Topology-aware placement: which GPU, NIC and CPUs each local rank gets. Pure: works on the
// Topology model and the node's network facts, so tests drive it with real hwloc exports.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "net_facts.hpp"
#include "options.hpp"
#include "topology.hpp"

namespace ddp::plan {

struct NicChoice {
  std::size_t nic = 0;     // index into Topology::nics
  unsigned port = 1;
  PathType path = PathType::SYS;
};

struct RankPlacement {
  std::optional<std::size_t> gpu;  // index into Topology::gpus
  std::optional<NicChoice> nic;
  CpuList cpus;                     // empty: leave the task's binding as Slurm set it
};

struct NodePlacement {
  std::vector<RankPlacement> ranks;             // one per local rank
  std::optional<std::string> socket_interface;  // for NCCL_SOCKET_IFNAME / GLOO_SOCKET_IFNAME
  std::string socket_interface_reason;
  std::vector<std::string> warnings;            // every fallback taken, in words for the user
};

struct PlacementRequest {
  std::vector<unsigned> step_gpus;  // Slurm's GPU indices on this node; local rank i drives [i]
  unsigned local_tasks = 1;
  CpuList allowed_cpus;             // CPUs the step holds here; empty = all in the topology
  // Set when the step's CPUs are not known (StepFacts::cpu_grant_problem): then no rank is bound,
  // each task keeps the CPUs Slurm bound it to, and the reason becomes a warning.
  std::string cpu_grant_problem;
  Bind bind = Bind::Closest;
  std::vector<std::string> preferred_interfaces;  // the profile's socket_interfaces, in order
};

NodePlacement place_ranks(const Topology& topo, const NetFacts& net, const PlacementRequest& req);

// Rank r of k gets its share of `cpus`: contiguous slices when there are enough, otherwise one
// CPU each, reused round-robin.
CpuList fair_share(const CpuList& cpus, unsigned rank, unsigned ranks);

}  // namespace ddp::plan
