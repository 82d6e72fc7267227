// What every helper program the plugin starts from a task's task_init gets (the sampler, the
// preflight), and how slurmstepd signals one: through a pidfd, so that a PID the kernel has
// given to another process since is never signalled.
#pragma once

#include <sys/types.h>

#include "user_limits.hpp"

namespace ddp::spank {

// The limits Slurm will give the task (user_limits.hpp), from the job's environment and
// slurm.conf's PropagateResourceLimits as this slurmstepd read it.
plan::UserLimits task_limits(char** job_env);

// Linux 5.3 and later; -1 (errno ENOSYS) before, where callers fall back on what they checked.
int open_pidfd(pid_t pid) noexcept;
bool signal_pidfd(int pidfd, int sig) noexcept;
// Whether the process has ended (its pidfd reads ready); false while it runs or when unknown.
bool pidfd_ended(int pidfd) noexcept;

}  // namespace ddp::spank
