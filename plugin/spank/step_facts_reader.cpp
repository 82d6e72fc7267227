#include "step_facts_reader.hpp"

#include <unistd.h>

#include <algorithm>
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "core_grant.hpp"
#include "error.hpp"
#include "hostlist.hpp"
#include "limits.hpp"
#include "local_host.hpp"
#include "parse.hpp"

extern "C" {
#include <slurm/slurm.h>  // SLURM_BATCH_SCRIPT and friends
}

namespace ddp::spank {
namespace {

// Item sizes differ (uint16_t for S_JOB_NCPUS, int for S_TASK_ID): a wrong size silently corrupts
// the stack, so each item is read through a function that names its exact type.
template <class T>
T item(spank_t sp, spank_item_t which, const char* name) {
  T value{};
  const spank_err_t rc = spank_get_item(sp, which, &value);
  if (rc != ESPANK_SUCCESS)
    throw plan::PlanError(std::string("cannot read ") + name + " from Slurm: " +
                          spank_strerror(rc));
  return value;
}

std::string hostname() { return plan::local_host_name().value_or("this node"); }

// The step's core ids on this node in Slurm's list syntax ("0-1,4"); "" when Slurm does not say,
// which the grant then reports rather than binding to the whole node.
std::string step_alloc_cores(spank_t sp) {
  char* cores = nullptr;
  if (spank_get_item(sp, S_STEP_ALLOC_CORES, &cores) != ESPANK_SUCCESS || cores == nullptr)
    return "";
  return cores;
}

// This node's name as Slurm knows it: entry NODE_ID of the step's node list. Not SLURMD_NODENAME
// from the step's environment: that is the node srun ran on (in a batch job, the batch node, on
// every node of the step); slurmstepd sets each node's own only in the tasks' environment, later.
std::optional<std::string> node_name(const std::string& nodelist, unsigned node_id) {
  const auto hosts = plan::expand_hostlist("SLURM_STEP_NODELIST", nodelist);
  if (node_id >= hosts.size()) return std::nullopt;
  return hosts[node_id];
}

// How often Slurm requeued the job. slurmstepd knows it for the batch step only
// (S_SLURM_RESTART_COUNT is 0 in the others); the batch script's SLURM_RESTART_COUNT reaches the
// steps its sruns start, in their environment.
std::uint32_t restart_count(spank_t sp) {
  std::uint32_t count = item<std::uint32_t>(sp, S_SLURM_RESTART_COUNT, "the job's restart count");
  if (const auto text = get_env(sp, "SLURM_RESTART_COUNT")) {
    try {
      count = std::max(count, static_cast<std::uint32_t>(
                                  plan::parse_unsigned("SLURM_RESTART_COUNT", *text, 0, 1000000)));
    } catch (const plan::PlanError&) {
      // Not Slurm's: a user's stray value counts for nothing.
    }
  }
  return count;
}

// The task's TMPDIR, for the error file directory: absolute, and plain enough for a command line.
bool usable_tmpdir(const std::string& dir) {
  if (dir.size() < 2 || dir.size() > 1024 || dir.front() != '/') return false;
  for (unsigned char c : dir)
    if (c <= ' ' || c >= 0x7f) return false;
  return true;
}

}  // namespace

std::optional<std::string> get_env(spank_t sp, const char* name, std::size_t max) {
  // Environment values may be long (CUDA_VISIBLE_DEVICES with 64 UUIDs); grow until it fits.
  std::vector<char> buf(256);
  for (;;) {
    const spank_err_t rc = spank_getenv(sp, name, buf.data(), static_cast<int>(buf.size()));
    if (rc == ESPANK_SUCCESS) return std::string(buf.data());
    if (rc != ESPANK_NOSPACE) return std::nullopt;
    if (buf.size() > max)
      throw plan::PlanError(std::string(name) + " is longer than " + std::to_string(max) +
                            " bytes; refusing to read it");
    buf.resize(std::min(buf.size() * 4, max + 1));
  }
}

std::optional<std::uint32_t> launch_step_id(spank_t sp) {
  const auto step = item<std::uint32_t>(sp, S_JOB_STEPID, "the step id");
  if (step == SLURM_BATCH_SCRIPT || step == SLURM_EXTERN_CONT || step == SLURM_INTERACTIVE_STEP ||
      step == SLURM_PENDING_STEP)
    return std::nullopt;
  return step;
}

plan::StepFacts read_step_facts(spank_t sp, const std::optional<plan::NodeTopology>& node,
                                const std::string& node_problem) {
  plan::StepFacts f;
  f.job_id = item<std::uint32_t>(sp, S_JOB_ID, "the job id");
  f.step_id = item<std::uint32_t>(sp, S_JOB_STEPID, "the step id");
  f.nodes = item<std::uint32_t>(sp, S_JOB_NNODES, "the step's node count");
  f.node_id = item<std::uint32_t>(sp, S_JOB_NODEID, "this node's index");
  f.total_tasks = item<std::uint32_t>(sp, S_JOB_TOTAL_TASK_COUNT, "the step's task count");
  f.local_tasks = item<std::uint32_t>(sp, S_JOB_LOCAL_TASK_COUNT, "this node's task count");
  f.cpus_on_node = item<std::uint16_t>(sp, S_JOB_NCPUS, "the step's CPU count");
  const auto nodelist = get_env(sp, "SLURM_STEP_NODELIST");
  if (!nodelist)
    throw plan::PlanError("SLURM_STEP_NODELIST is not set in the step; cannot find MASTER_ADDR");
  f.nodelist = *nodelist;
  f.hostname = node_name(f.nodelist, f.node_id).value_or(hostname());
  f.resv_ports = get_env(sp, "SLURM_STEP_RESV_PORTS");
  f.restart_count = restart_count(sp);
  if (const auto tmp = get_env(sp, "TMPDIR"); tmp && usable_tmpdir(*tmp)) f.tmpdir = *tmp;
  f.alloc_cores = step_alloc_cores(sp);
  if (node)
    f.topology = node->topology;
  else
    f.topology_problem = node_problem;
  f.net = plan::read_net_facts();
  // slurmstepd runs inside the step's cgroup when the site uses task/cgroup with
  // ConstrainCores=yes: its affinity is then the CPUs the step holds here, else the whole node.
  plan::apply_core_grant(f, plan::process_affinity());
  return f;
}

plan::GpuFacts read_gpu_facts(spank_t sp) {
  plan::GpuFacts g;
  if (auto gpus = get_env(sp, "SLURM_STEP_GPUS"))
    g.step_gpus = plan::parse_index_list("SLURM_STEP_GPUS", *gpus, plan::kMaxGpuIndex);
  g.visible = get_env(sp, "CUDA_VISIBLE_DEVICES");
  return g;
}

plan::TaskFacts read_task_facts(spank_t sp) {
  plan::TaskFacts t;
  const int local = item<int>(sp, S_TASK_ID, "the local task id");
  if (local < 0) throw plan::PlanError("Slurm reported a negative local task id");
  t.local_id = static_cast<unsigned>(local);
  t.global_id = item<std::uint32_t>(sp, S_TASK_GLOBAL_ID, "the global task id");
  t.visible = get_env(sp, "CUDA_VISIBLE_DEVICES");
  return t;
}

}  // namespace ddp::spank
