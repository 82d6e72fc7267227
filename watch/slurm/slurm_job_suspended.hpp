// Whether slurmctld holds the job suspended (scontrol suspend, gang scheduling, preemption by
// suspension), asked before the watch calls a stopped rank frozen. Under proctrack/cgroup Slurm
// freezes the whole step, the watch with it, and the watch's own gap (gap.hpp) discounts the time;
// under proctrack/linuxproc it stops only the processes below slurmstepd, and the watch (started
// apart from the program) sees every rank in state T for as long as the suspension lasts.
//
// In a child process, as the watch's other requests to slurmctld: the loop never waits for it.
// The child says "1" (suspended) or "0" (not) on a pipe and ends; an end without a word (no
// libslurm, slurmctld unreachable) means the watch cannot tell, and judges as before.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>

namespace ddp::watch {

struct SuspendedQuestion {
  pid_t pid = -1;
  int fd = -1;  // the answer's pipe, non-blocking and close-on-exec
};

// nullopt when no child could be started.
std::optional<SuspendedQuestion> ask_whether_suspended(std::uint32_t job);

}  // namespace ddp::watch
