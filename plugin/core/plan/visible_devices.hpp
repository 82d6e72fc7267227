// CUDA_VISIBLE_DEVICES for one task, so that cuda:LOCAL_RANK is the GPU the plan gives the rank:
// step GPU LOCAL_RANK, whichever of Slurm's two numberings is in force.
//
// What Slurm writes (src/plugins/gres/common/gres_common.c, common_gres_set_env and
// gres_common_gpu_set_env; the same in 22.05 and 24.11):
// - SLURM_STEP_GPUS always holds node-wide indices (the GPU's place in the node's gres.conf
//   order). CUDA_VISIBLE_DEVICES holds the same indices, unless gres_use_local_device_index() is
//   true: TaskPlugin task/cgroup with ConstrainDevices=yes. Then it holds 0..n-1, the GPUs'
//   places among those the cgroup lets the process see, which is what CUDA numbers.
// - slurmstepd writes both for the whole step before the tasks exist (gres_g_step_set_env,
//   seen in user_init). With per-task binding (--gpus-per-task, which srun turns into
//   --gpu-bind=per_task:N, or --gpu-bind single/closest/map_gpu/mask_gpu) it writes both again
//   in each task before task_init (gres_g_task_set_env), narrowed to the task's GPUs: that
//   SLURM_STEP_GPUS is no longer the step's. Under ConstrainDevices the task's device cgroup
//   then holds only its own GPUs (task_cgroup_devices_constrain), its list is 0..k-1 in that
//   cgroup, and its SLURM_STEP_GPUS names the step's first k GPUs whichever it holds (the
//   usable bits are tested against the local index).
// Seen on the test cluster (22.05, no cgroup), step GPUs 2,3, --gpus-per-task=1: task 0 has
// SLURM_STEP_GPUS=2 CUDA_VISIBLE_DEVICES=2, task 1 has 3 and 3.
//
// So the step's GPUs are read in user_init (GpuFacts), each task's list in task_init
// (TaskFacts::visible), and the numbering is told from the step's pair: lists equal = node-wide,
// step list 0..n-1 while the GPUs are not = cgroup-local; when the GPUs are 0..n-1 both read the
// same and only the task's list can tell (below).
#pragma once

#include <optional>
#include <string>

#include "step_facts.hpp"

namespace ddp::plan {

enum class GpuNumbering {
  NodeWide,     // CUDA_VISIBLE_DEVICES == SLURM_STEP_GPUS, not 0..n-1: no device cgroup
  CgroupLocal,  // CUDA_VISIBLE_DEVICES == 0..n-1 != SLURM_STEP_GPUS: ConstrainDevices=yes
  Either,       // both are 0..n-1: the step's lists cannot tell
  Unknown,      // no GPUs, no list, a list of UUIDs (MIG), or lists that do not pair up
};
GpuNumbering gpu_numbering(const GpuFacts& gpus);
// For ddp-plan --explain: "cgroup-local (ConstrainDevices=yes) ...".
const char* gpu_numbering_text(GpuNumbering numbering);

// What the task's CUDA_VISIBLE_DEVICES must become; nullopt: leave it as Slurm set it.
// - Not narrowed (the task's list is the step's), or Unknown numbering: left as it is. UUID and
//   MIG lists (GPU-..., MIG-...) are never rewritten: Slurm writes them in both numberings,
//   and a UUID the task's cgroup does not hold would make CUDA see nothing.
// - Unset while the step's is set: the step's list (else CUDA would see every GPU of the node).
// - Narrowed, NodeWide: the step's list. No cgroup hides the other GPUs.
// - Narrowed, CgroupLocal: left as it is when it holds LOCAL_RANK (the task's cgroup has that
//   many GPUs); the step's indices would name devices the cgroup does not have.
// - Narrowed, Either: the step's list when the task's list holds the rank's own entry of it
//   (without a cgroup, per-task binding gives task i its own GPU, and widening is needed; with
//   one, that entry exists in the task's cgroup, and CUDA ignores the entries past the last one
//   that does).
// - Otherwise the task's cgroup does not have cuda:LOCAL_RANK and no value can give it one:
//   throws PlanError naming the lists and the fix (no per-task GPU binding for a DDP step).
std::optional<std::string> task_visible_devices(const GpuFacts& gpus, const TaskFacts& task);

}  // namespace ddp::plan
