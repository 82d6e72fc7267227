// The resource limits Slurm gives a task, for the helper programs the plugin starts beside it
// (the sampler, the preflight). Slurm applies the submitting shell's limits (SLURM_RLIMIT_NAME in
// the job's environment, "U" in front when the user asked with --propagate) only just before it
// execs the task (slurmstepd's ulimits.c, called last in exec_task), after task_init: a helper
// forked there would otherwise run with slurmstepd's limits, which are root's and often
// unlimited.
#pragma once

#include <sys/resource.h>

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ddp::plan {

// What slurm.conf's PropagateResourceLimits[Except] says of one limit (by Slurm's name: "NOFILE").
enum class Propagation { Yes, No, Unknown };
using PropagationRule = std::function<Propagation(std::string_view name)>;

struct UserLimit {
  int resource = 0;  // RLIMIT_*
  rlim_t soft = 0;
};

// A fixed-size list, so that a forked child applies it without allocating.
struct UserLimits {
  static constexpr std::size_t kMax = 16;
  UserLimit limits[kMax];
  std::size_t count = 0;
};

// The limits Slurm will set on the task, from its environment ("NAME=VALUE" strings): those the
// user asked for with --propagate, and those slurm.conf propagates. Unknown propagation (the
// rule could not be read) leaves that limit as it is. A value Slurm would reject is skipped, as
// Slurm skips it.
UserLimits user_limits(const std::vector<std::string_view>& env, const PropagationRule& rule);

}  // namespace ddp::plan
