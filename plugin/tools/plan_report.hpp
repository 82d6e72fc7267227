// The plan of one node as `ddp-plan` prints it: JSON for tools, a table for people.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "planner.hpp"

namespace ddp::tools {

nlohmann::json plan_to_json(const plan::StepPlan& step, const plan::NodePlacement& placement,
                            const std::vector<plan::TaskPlan>& tasks);
std::string plan_to_table(const plan::StepPlan& step, const plan::NodePlacement& placement,
                          const std::vector<plan::TaskPlan>& tasks);

}  // namespace ddp::tools
