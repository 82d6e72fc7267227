// Reads the planner's facts from slurmstepd through the SPANK API.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "spank_api.hpp"
#include "node_facts_cache.hpp"
#include "step_facts.hpp"

namespace ddp::spank {

// The step's id, or nullopt for steps that are not task launches (batch script, extern step,
// interactive shell): those never get rank variables.
std::optional<std::uint32_t> launch_step_id(spank_t sp);

// `node` is the node's topology read before (init_post_opt), `node_problem` why there is none.
plan::StepFacts read_step_facts(spank_t sp, const std::optional<plan::NodeTopology>& node,
                                const std::string& node_problem);
// In user_init: the step's GPUs, before per-task binding narrows them in each task.
plan::GpuFacts read_gpu_facts(spank_t sp);
// In task_init: the task's ids and its own CUDA_VISIBLE_DEVICES.
plan::TaskFacts read_task_facts(spank_t sp);

// The task's (or step's) environment variable, nullopt when unset. Throws PlanError when it is
// longer than `max` bytes (the job's environment is the user's word).
std::optional<std::string> get_env(spank_t sp, const char* name, std::size_t max = 1 << 20);

}  // namespace ddp::spank
