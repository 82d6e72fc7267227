// `ddp-report --json`: every step's summary as one JSON document, with every node (a script's
// input, where the text shows a large step's spread and worst nodes only). ddp-report(1) has the
// schema.
#pragma once

#include <nlohmann/json.hpp>

#include "step_report.hpp"
#include "verdicts.hpp"

namespace ddp::monitor {

inline constexpr const char* kReportFormat = "ddp-report/1";

nlohmann::ordered_json step_json(const StepData& step, const Verdicts& verdicts);

}  // namespace ddp::monitor
