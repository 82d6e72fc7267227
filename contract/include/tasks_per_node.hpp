// Slurm's compressed task counts per node, "2(x3),1" = 2,2,2,1, as in SLURM_STEP_TASKS_PER_NODE.
#pragma once

#include <string>
#include <vector>

namespace ddp::detail {

// One count per node, in the step's node order. Throws plan::PlanError naming `what` when the text is
// not in Slurm's syntax, a count is 0, or it lists more than `max_nodes` nodes.
std::vector<unsigned> expand_tasks_per_node(const std::string& what, const std::string& text,
                                            unsigned max_nodes);

}  // namespace ddp::detail
