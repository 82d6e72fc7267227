// Whether a DDP step runs ddp-preflight before the user's program, and its command line: the
// user's --ddp-preflight[=no] wins over the profile's `preflight: {enabled: ...}`, and the
// profile's thresholds become the program's flags.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "planner.hpp"

namespace ddp::plan {

// The whole preflight, unless the profile's timeout_s says otherwise.
inline constexpr unsigned kDefaultPreflightTimeout = 120;

struct PreflightRun {
  std::vector<std::string> argv;  // argv[0]: the program (plugstack.conf preflight=, else installed)
  unsigned timeout_s = kDefaultPreflightTimeout;  // then the task ends it
};

std::optional<PreflightRun> plan_preflight(const StepPlan& step, const PlugstackConfig& config);

}  // namespace ddp::plan
