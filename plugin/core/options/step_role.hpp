// Which steps of a job are DDP steps.
//
// Options given to sbatch or salloc reach every srun inside the job, but job scripts run more than
// the training step: a setup step on one task, a per-node staging step, a monitor beside training.
// torchrun touches only the step it launches, and users expect the same of --ddp. The rule:
//   - `srun --ddp=off` makes a step plain; `srun --ddp[...]` on the step's own command line makes
//     it a DDP step of its own shape (only the shape options on that command line are checked);
//   - otherwise a step that spans the job's DDP shape (all its nodes and tasks) is a DDP step,
//     checked strictly; a step that asks for less (fewer nodes, or fewer tasks per node) is plain;
//   - a job whose own allocation misses the asked shape (no cli_filter, or a wrong request) keeps
//     every step strict, so a forgotten filter fails the step instead of running one process.
// Only srun knows which options were typed on its own command line, so srun decides once per step
// and hands the decision to slurmstepd in one environment variable (kStepRoleVar).
//
// In: the merged options, what srun's command line said, the job's and the step's shape.
// Out: the step's role, which shape options slurmstepd checks, and one line saying why.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "options.hpp"

namespace ddp::plan {

// Set by srun in the step's environment, read and removed by slurmstepd.
inline constexpr const char* kStepRoleVar = "SLURM_SPANK_DDP_STEP_ROLE";

enum class StepRole { Ddp, Plain };

// Which of the user's options srun saw on its own command line (not inherited from the job).
struct CommandLineOptions {
  bool any_ddp = false;  // any --ddp* option except --ddp=off, --ddp-verbose, --ddp-monitor
  bool nodes = false;    // --ddp-nodes
  bool gpus = false;     // --ddp-gpus
};

// The allocation srun runs in, from the environment sbatch or salloc gave it.
struct JobShape {
  std::vector<unsigned> tasks_per_node;  // one count per node of the job
  unsigned nodes() const { return static_cast<unsigned>(tasks_per_node.size()); }
  unsigned tasks() const;
};

struct StepShape {
  unsigned nodes = 1;
  unsigned tasks = 1;
};

struct StepRoleInput {
  UserOptions options;           // merged: inherited from the job, then srun's command line
  CommandLineOptions command_line;
  std::optional<JobShape> job;   // unset when srun creates its own allocation
  StepShape step;
};

struct StepRoleDecision {
  StepRole role = StepRole::Ddp;
  bool check_nodes = true;       // hold the step to --ddp-nodes
  bool check_gpus = true;        // hold the step to --ddp-gpus
  bool job_has_shape = false;    // a shape mismatch is then the step's own, not the allocation's
  std::string reason;            // one line for --ddp-verbose
};

// Only for steps where some --ddp* option is in force (options.requested).
StepRoleDecision decide_step_role(const StepRoleInput& input);

// The variable's value and back. decode throws PlanError on a value srun never writes.
std::string encode_step_role(const StepRoleDecision& decision);
StepRoleDecision decode_step_role(std::string_view text);

}  // namespace ddp::plan
