// What every helper program the plugin starts from a task's task_init gets before it execs (the
// sampler, the preflight): the limits Slurm will give the task, not slurmstepd's.
#pragma once

#include "user_limits.hpp"

namespace ddp::spank {

// The limits Slurm will give the task (user_limits.hpp), from the job's environment and
// slurm.conf's PropagateResourceLimits as this slurmstepd read it.
plan::UserLimits task_limits(char** job_env);

// In the forked child before exec (async-signal-safe: getrlimit and setrlimit only). Sets each
// soft limit; one above the hard limit is left as it is, as for the task (whose user cannot
// raise it either).
void apply_user_limits(const plan::UserLimits& limits) noexcept;

}  // namespace ddp::spank
