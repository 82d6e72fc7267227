#include "core_grant.hpp"

#include <algorithm>
#include <iterator>

#include "error.hpp"
#include "parse.hpp"

namespace ddp::plan {
namespace {

// Above any node's core count; bounds what a corrupt list can allocate.
constexpr unsigned kMaxCoreId = 65535;

std::string core_ids_text(const std::string& core_ids) { return "Slurm's core ids " + quoted(core_ids); }

}  // namespace

CpuGrant grant_from_cores(const Topology& topo, const std::string& core_ids, unsigned step_cpus,
                          const CpuList& within) {
  CpuGrant out;
  std::vector<unsigned> ids;
  try {
    ids = parse_index_list("S_STEP_ALLOC_CORES", core_ids, kMaxCoreId);
  } catch (const PlanError& e) {
    out.problem = std::string("cannot read Slurm's core ids: ") + e.what();
    return out;
  }
  if (ids.empty()) {
    out.problem = "Slurm names no core of this step on this node";
    return out;
  }
  if (topo.cores.empty()) {
    out.problem = "the topology (" + topo.source +
                  ") does not show every core of the node (a cpuset hides some), so " +
                  core_ids_text(core_ids) + " cannot be mapped to CPUs";
    return out;
  }
  const unsigned highest = *std::max_element(ids.begin(), ids.end());
  if (highest >= topo.cores.size()) {
    out.problem = core_ids_text(core_ids) + " go up to core " + std::to_string(highest) +
                  " but hwloc finds " + std::to_string(topo.cores.size()) + " core(s) (" +
                  topo.source + "): slurm.conf describes this node with more cores than it " +
                  "has. Fix: make the node's Sockets/CoresPerSocket/ThreadsPerCore match " +
                  "`slurmd -C`";
    return out;
  }
  for (unsigned id : ids)
    out.cpus.insert(out.cpus.end(), topo.cores[id].begin(), topo.cores[id].end());
  std::sort(out.cpus.begin(), out.cpus.end());
  if (out.cpus.size() != step_cpus) {
    out.problem = core_ids_text(core_ids) + " are CPUs " + format_cpu_list(out.cpus) + " (" +
                  std::to_string(out.cpus.size()) + ") but Slurm counts " +
                  std::to_string(step_cpus) + " CPU(s) for the step here: slurm.conf's " +
                  "ThreadsPerCore differs from the hardware, or the step holds only some " +
                  "threads of its cores. Fix: make the node's layout match `slurmd -C`";
    out.cpus.clear();
    return out;
  }
  if (!within.empty()) {
    CpuList both;
    std::set_intersection(out.cpus.begin(), out.cpus.end(), within.begin(), within.end(),
                          std::back_inserter(both));
    if (both.empty()) {
      out.problem = core_ids_text(core_ids) + " are CPUs " + format_cpu_list(out.cpus) +
                    ", none of which slurmstepd may run on (" + format_cpu_list(within) +
                    "): the node's core numbering is not hwloc's. Fix: check slurm.conf " +
                    "against `slurmd -C`";
      out.cpus.clear();
      return out;
    }
    out.cpus = std::move(both);
  }
  return out;
}

void apply_core_grant(StepFacts& facts, const CpuList& affinity) {
  facts.allowed_cpus = affinity;
  facts.cpu_grant_problem.clear();
  if (!facts.alloc_cores) return;
  if (!facts.topology) {
    facts.cpu_grant_problem = "without the node topology " + core_ids_text(*facts.alloc_cores) +
                              " cannot be mapped to CPUs";
    return;
  }
  CpuGrant grant = grant_from_cores(*facts.topology, *facts.alloc_cores, facts.cpus_on_node, affinity);
  if (grant.problem.empty()) {
    facts.allowed_cpus = std::move(grant.cpus);
    return;
  }
  // Under task/cgroup with ConstrainCores=yes slurmstepd sits in the step's cpuset, which then
  // hides the other cores from a live hwloc load (so the ids cannot be mapped): an affinity of
  // exactly the step's CPU count is that cpuset, the grant itself, enforced by the kernel.
  if (affinity.size() == facts.cpus_on_node) return;
  facts.cpu_grant_problem = std::move(grant.problem);
}

}  // namespace ddp::plan
