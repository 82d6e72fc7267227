#include "preflight.hpp"

#include <algorithm>
#include <sstream>

namespace ddp::plan {
namespace {

std::string text(double v) {
  std::ostringstream out;
  out.precision(10);
  out << v;
  return out.str();
}

}  // namespace

unsigned default_preflight_timeout(unsigned step_ranks) {
  // At most the longest a profile may set (timeout_s: 10..3600).
  return std::min(3600u, kDefaultPreflightTimeout + step_ranks / kPreflightRanksPerSecond);
}

std::optional<PreflightRun> plan_preflight(const StepPlan& step, const PlugstackConfig& config) {
  const PreflightSettings& p = step.profile.preflight;
  if (!step.options.preflight.value_or(p.enabled.value_or(false))) return std::nullopt;
  PreflightRun run;
  run.timeout_s = p.timeout_s.value_or(default_preflight_timeout(step.facts.total_tasks));
  // Each wait on the other ranks gets half: a rank that hangs is named before the task ends it.
  run.argv = {config.preflight_program.value_or(DDP_PREFLIGHT_PROGRAM), "--timeout",
              std::to_string(run.timeout_s / 2)};
  const auto add = [&](const char* flag, const std::optional<double>& value) {
    if (value) run.argv.insert(run.argv.end(), {flag, text(*value)});
  };
  add("--min-busbw-gbps", p.min_busbw_gbps);
  add("--max-latency-us", p.max_latency_us);
  add("--min-fraction-of-median", p.min_fraction_of_median);
  if (p.min_busbw_gbps || p.max_latency_us || p.min_fraction_of_median)
    run.argv.insert(run.argv.end(), {"--thresholds-from", "profile " + step.profile.name});
  // A failure before the program is the preflight's to say, and to retry (--ddp-retries).
  if (step.watch && step.watch->retries > 0) {
    run.argv.insert(run.argv.end(), {"--job", std::to_string(step.facts.job_id), "--retries",
                                     std::to_string(step.watch->retries), "--restarts",
                                     std::to_string(step.facts.restart_count)});
    run.timeout_s += kPreflightRequeueSeconds;
  }
  return run;
}

}  // namespace ddp::plan
