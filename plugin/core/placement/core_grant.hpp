// Which OS CPUs Slurm granted a step on this node. Slurm says it in core ids (S_STEP_ALLOC_CORES,
// "0-1,4"); slurmstepd's own affinity is the whole node under task/affinity alone or task/cgroup
// with ConstrainCores=no, so only the core ids tell a shared node's steps apart. Pure: works on
// the Topology model, so tests drive it with real hwloc exports.
#pragma once

#include <optional>
#include <string>

#include "step_facts.hpp"
#include "topology.hpp"

namespace ddp::plan {

struct CpuGrant {
  CpuList cpus;         // the step's OS CPUs on this node, when problem is empty
  std::string problem;  // why the core ids cannot be trusted, for the user; "" when they can
};

// Maps Slurm's core ids to OS CPUs as slurmd does: core c is the c-th core in hwloc's tree order
// (Slurm numbers cores socket by socket), with all its hardware threads. `step_cpus` is the CPU
// count Slurm gave the step here (S_JOB_NCPUS): it must equal the threads of those cores, or
// slurm.conf's layout is not the hardware's (SlurmdParameters=config_overrides allows that) and
// the ids mean other CPUs. The result is restricted to `within` (slurmstepd's affinity: the
// step's cgroup cpuset where one is enforced); empty `within` restricts nothing.
CpuGrant grant_from_cores(const Topology& topo, const std::string& core_ids, unsigned step_cpus,
                          const CpuList& within);

// Sets facts.allowed_cpus (and facts.cpu_grant_problem) from facts.alloc_cores, facts.topology
// and facts.cpus_on_node. Without core ids (ddp-plan without --alloc-cores) the step's CPUs are
// `affinity`, as on a node given whole. When the ids cannot be mapped, an `affinity` of exactly
// the step's CPU count is taken as the step's cgroup cpuset; otherwise allowed_cpus stays
// `affinity` with a problem, and the planner binds nothing: each task keeps Slurm's binding.
void apply_core_grant(StepFacts& facts, const CpuList& affinity);

}  // namespace ddp::plan
