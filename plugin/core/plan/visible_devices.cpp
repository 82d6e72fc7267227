#include "visible_devices.hpp"

#include <algorithm>

#include "error.hpp"
#include "limits.hpp"
#include "parse.hpp"

namespace ddp::plan {
namespace {

// A list of indices, or nullopt for anything else (UUIDs, MIG identifiers, "" that hides every
// GPU, junk): Slurm never writes those as indices, so they are not ours to reinterpret.
std::optional<std::vector<unsigned>> indices(const std::optional<std::string>& text) {
  if (!text) return std::nullopt;
  try {
    auto list = parse_index_list("CUDA_VISIBLE_DEVICES", *text, kMaxGpuIndex);
    if (!list.empty()) return list;
  } catch (const PlanError&) {
  }
  return std::nullopt;
}

bool counts_from_zero(const std::vector<unsigned>& list) {
  for (std::size_t i = 0; i < list.size(); ++i)
    if (list[i] != i) return false;
  return true;
}

bool holds(const std::vector<unsigned>& list, unsigned value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

PlanError no_gpu_for_rank(const GpuFacts& gpus, const TaskFacts& task) {
  const std::string rank = std::to_string(task.local_id);
  return PlanError(
      "local rank " + rank + " cannot use cuda:LOCAL_RANK: Slurm bound its task to "
      "CUDA_VISIBLE_DEVICES=" + *task.visible + " (--gpus-per-task or --gpu-bind), which does "
      "not hold entry " + rank + " of the step's CUDA_VISIBLE_DEVICES=" + *gpus.visible +
      " (SLURM_STEP_GPUS=" + join(gpus.step_gpus) + "); with ConstrainDevices=yes a bound task "
      "sees only its own GPUs, numbered from 0, so no value gives it cuda:" + rank +
      ". Fix: give the step its GPUs without binding them per task (--ddp-gpus=G or "
      "--gpus-per-node=G rather than --gpus-per-task; srun --gpu-bind=none undoes a binding the "
      "job asked for); each rank then uses its own GPU by LOCAL_RANK");
}

}  // namespace

GpuNumbering gpu_numbering(const GpuFacts& gpus) {
  const auto step = indices(gpus.visible);
  if (gpus.step_gpus.empty() || !step || step->size() != gpus.step_gpus.size())
    return GpuNumbering::Unknown;
  const bool local = counts_from_zero(*step);
  if (*step == gpus.step_gpus) return local ? GpuNumbering::Either : GpuNumbering::NodeWide;
  return local ? GpuNumbering::CgroupLocal : GpuNumbering::Unknown;
}

const char* gpu_numbering_text(GpuNumbering numbering) {
  switch (numbering) {
    case GpuNumbering::NodeWide:
      return "node-wide: CUDA_VISIBLE_DEVICES is SLURM_STEP_GPUS (no ConstrainDevices)";
    case GpuNumbering::CgroupLocal:
      return "cgroup-local: CUDA_VISIBLE_DEVICES counts the step's GPUs from 0 "
             "(ConstrainDevices=yes)";
    case GpuNumbering::Either:
      return "either: the step's GPUs are 0..n-1, which both numberings write alike";
    case GpuNumbering::Unknown:
      break;
  }
  return "unknown: no GPUs, or CUDA_VISIBLE_DEVICES is unset, UUIDs (MIG) or does not pair with "
         "SLURM_STEP_GPUS; left as Slurm set it";
}

std::optional<std::string> task_visible_devices(const GpuFacts& gpus, const TaskFacts& task) {
  const GpuNumbering numbering = gpu_numbering(gpus);
  if (numbering == GpuNumbering::Unknown || task.visible == gpus.visible) return std::nullopt;
  if (!task.visible) return gpus.visible;
  const auto mine = indices(task.visible);
  if (!mine) return std::nullopt;
  const auto step = indices(gpus.visible);
  if (*mine == *step) return std::nullopt;  // the same list, written otherwise
  if (numbering == GpuNumbering::NodeWide) return gpus.visible;
  if (task.local_id >= step->size()) return std::nullopt;  // more ranks than GPUs: none of its own
  // The step's list is 0..n-1 here, so the rank's own entry is LOCAL_RANK in either numbering.
  if (!holds(*mine, task.local_id)) throw no_gpu_for_rank(gpus, task);
  if (numbering == GpuNumbering::CgroupLocal) return std::nullopt;
  return gpus.visible;
}

}  // namespace ddp::plan
