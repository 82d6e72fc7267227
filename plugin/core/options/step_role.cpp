#include "step_role.hpp"

#include <algorithm>
#include <numeric>

#include "error.hpp"
#include "parse.hpp"

namespace ddp::plan {
namespace {

constexpr std::string_view kPlain = "plain";
constexpr std::string_view kDdp = "ddp";
constexpr std::string_view kCheckNodes = "check-nodes";
constexpr std::string_view kCheckGpus = "check-gpus";
constexpr std::string_view kJobHasShape = "job-has-shape";

std::string count(unsigned n, const char* word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

StepRoleDecision plain(std::string reason) {
  StepRoleDecision d;
  d.role = StepRole::Plain;
  d.check_nodes = d.check_gpus = false;
  d.reason = std::move(reason);
  return d;
}

// Does the job's allocation have what --ddp-nodes/--ddp-gpus asked for?
bool job_has_shape(const UserOptions& o, const JobShape& job) {
  if (o.nodes && job.nodes() != *o.nodes) return false;
  if (o.gpus_per_node)
    return std::all_of(job.tasks_per_node.begin(), job.tasks_per_node.end(),
                       [&](unsigned t) { return t == *o.gpus_per_node; });
  return true;
}

}  // namespace

unsigned JobShape::tasks() const {
  return std::accumulate(tasks_per_node.begin(), tasks_per_node.end(), 0u);
}

StepRoleDecision decide_step_role(const StepRoleInput& in) {
  const UserOptions& o = in.options;
  if (o.off) return plain("--ddp=off");
  StepRoleDecision d;
  if (in.command_line.any_ddp) {
    // A DDP step of its own shape: the job's --ddp-nodes/--ddp-gpus describe another step.
    d.check_nodes = in.command_line.nodes;
    d.check_gpus = in.command_line.gpus;
    d.reason = "--ddp on this srun: a DDP step of its own shape";
    return d;
  }
  if (!in.job) {
    d.reason = "srun made its own allocation for this step";
    return d;
  }
  const JobShape& job = *in.job;
  d.job_has_shape = job_has_shape(o, job);
  if (!d.job_has_shape) {
    // Strict, so the step fails with the advice that fixes the allocation.
    d.reason = "the job's allocation does not have the asked shape";
    return d;
  }
  const bool fewer_nodes = in.step.nodes < job.nodes();
  // Per node on average: Slurm may spread a step's tasks unevenly, but a step of fewer tasks than
  // the job holds always has fewer on some node.
  const bool fewer_tasks = in.step.tasks < job.tasks();
  if (fewer_nodes || fewer_tasks)
    return plain("a plain step: it runs " + count(in.step.tasks, "task") + " on " +
                 count(in.step.nodes, "node") + ", the job's DDP shape is " +
                 count(job.tasks(), "task") + " on " + count(job.nodes(), "node") +
                 " (srun --ddp makes it a DDP step of its own shape)");
  d.reason = "the step spans the job's DDP shape";
  return d;
}

std::string encode_step_role(const StepRoleDecision& d) {
  if (d.role == StepRole::Plain) return std::string(kPlain);
  std::string out(kDdp);
  if (d.check_nodes) out += "," + std::string(kCheckNodes);
  if (d.check_gpus) out += "," + std::string(kCheckGpus);
  if (d.job_has_shape) out += "," + std::string(kJobHasShape);
  return out;
}

StepRoleDecision decode_step_role(std::string_view text) {
  const auto bad = [&] {
    return PlanError(std::string(kStepRoleVar) + "=" + quoted(text) +
                     " was not written by srun's spank_ddp; unset it (it is set per step)");
  };
  if (text == kPlain) return plain("");
  StepRoleDecision d;
  d.check_nodes = d.check_gpus = false;
  std::size_t start = 0;
  bool first = true;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string_view token = text.substr(start, comma - start);
    if (first) {
      if (token != kDdp) throw bad();
      first = false;
    } else if (token == kCheckNodes) {
      d.check_nodes = true;
    } else if (token == kCheckGpus) {
      d.check_gpus = true;
    } else if (token == kJobHasShape) {
      d.job_has_shape = true;
    } else {
      throw bad();
    }
    start = comma + 1;
  }
  return d;
}

}  // namespace ddp::plan
