// `ddp-report --html FILE`: one self-contained page (inline SVG and CSS, a small inline script,
// nothing fetched) per report: for each step its summary table, what is flagged (idle GPUs, slow
// nodes), a chart over time per metric (svg_chart.hpp) and a table of the nodes, bounded as the
// text is (summary.hpp's kFullNodes). Without the script the page is complete; with it, hovering
// a chart reads the values at that time.
#pragma once

#include <string>
#include <vector>

#include "step_report.hpp"
#include "verdicts.hpp"

namespace ddp::monitor {

struct JudgedStep {
  const StepData* step;
  Verdicts verdicts;
};

// `generator`: what made the page ("ddp-report 0.1.0"), said at its foot.
std::string render_page(const std::vector<JudgedStep>& steps, const std::string& generator);

// Writes `page` to `path`, replacing what is there: into a new file beside it, then renamed over
// it, so a link or a FIFO another user put at `path` is replaced, never written through. Throws
// ddp::plan::PlanError saying why it could not.
void write_page_file(const std::string& path, const std::string& page);

}  // namespace ddp::monitor
