// The plan of one node as `ddp-plan` prints it: JSON for tools, a table for people.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "planner.hpp"

namespace ddp::tools {

nlohmann::json plan_to_json(const plan::StepPlan& step, const plan::NodePlacement& placement,
                            const std::vector<plan::TaskPlan>& tasks);
std::string plan_to_table(const plan::StepPlan& step, const plan::NodePlacement& placement,
                          const std::vector<plan::TaskPlan>& tasks);

// `--explain`: per local rank, how its GPU was matched (Slurm's index, its place in hwloc's
// PCI bus-id order, the bus id) and which CUDA device it is, so an admin sees why a node got the
// plan it got. task_visible: each task's CUDA_VISIBLE_DEVICES as Slurm set it (unset: the step's).
std::string plan_explain(const plan::StepPlan& step, const plan::NodePlacement& placement,
                         const std::vector<plan::TaskPlan>& tasks, const plan::GpuFacts& gpus,
                         const std::optional<std::string>& task_visible);

}  // namespace ddp::tools
