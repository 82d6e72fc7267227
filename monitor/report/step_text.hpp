// ddp-report's text: a line for the whole step, then each node's block as the job's output showed
// it. A step of more than kFullNodes nodes (summary.hpp) shows the spread of the nodes instead and
// the blocks of its worst nodes only, so the text stays a page long at 1,000 nodes (--json has
// every node).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "step_report.hpp"
#include "verdicts.hpp"

namespace ddp::monitor {

// Lists in one line (idle GPUs, slow nodes) name this many, then count the rest.
inline constexpr std::size_t kListed = 4;

// "a, b, c, d and 17 more"
std::string listed(const std::vector<std::string>& items, std::size_t most = kListed);

// "job 17 step 0: 2 of 2 nodes, 4 GPUs, 6.6 s, mean GPU utilisation 49%, 1 idle (n1 GPU 1)"
std::string step_line(const StepData& step, const Verdicts& verdicts);

// The step line, then the nodes' blocks (or the spread and the worst nodes' blocks).
std::string format_step(const StepData& step, const Verdicts& verdicts);

}  // namespace ddp::monitor
