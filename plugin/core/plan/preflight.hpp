// Whether a DDP step runs ddp-preflight before the user's program, and its command line: the
// user's --ddp-preflight[=no] wins over the profile's `preflight: {enabled: ...}`, and the
// profile's thresholds become the program's flags.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "planner.hpp"

namespace ddp::plan {

// The whole preflight, unless the profile's timeout_s says otherwise: kDefaultPreflightTimeout, and
// a second more for every kPreflightRanksPerSecond ranks of the step, since rank 0's store serves
// each rank's requests in turn (bench/scale.sh measures the rendezvous and the exchange at 8,192
// ranks): a healthy 1,000-node step must not meet a time-out made for two nodes.
inline constexpr unsigned kDefaultPreflightTimeout = 120;
// With --ddp-retries, more for rank 0's requeue after a failure: its six requests to slurmctld at
// MessageTimeout's default of 10 s.
inline constexpr unsigned kPreflightRequeueSeconds = 60;
inline constexpr unsigned kPreflightRanksPerSecond = 64;
unsigned default_preflight_timeout(unsigned step_ranks);

struct PreflightRun {
  std::vector<std::string> argv;  // argv[0]: the program (plugstack.conf preflight=, else installed)
  unsigned timeout_s = kDefaultPreflightTimeout;  // then the task ends it
};

std::optional<PreflightRun> plan_preflight(const StepPlan& step, const PlugstackConfig& config);

}  // namespace ddp::plan
