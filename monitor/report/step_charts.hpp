// From a step's series to the charts of its page: one per metric that was sampled. A small step
// (kMaxLines) gets a line per GPU, rank or NIC; a larger one the spread of its nodes with the
// verdicts' worst nodes drawn on it, the same nodes on every chart.
#pragma once

#include <vector>

#include "step_report.hpp"
#include "svg_chart.hpp"
#include "verdicts.hpp"

namespace ddp::monitor {

std::vector<Chart> step_charts(const StepData& step, const Verdicts& verdicts);

}  // namespace ddp::monitor
