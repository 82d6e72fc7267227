// --ddp-monitor inside Slurm. slurmstepd (root) only makes the control channel, tells the
// sampler the tasks' pids and stops it; the sampler itself runs as the job's user, started from
// local task 0 after Slurm dropped privileges, and never outlives the step:
//
//   init_post_opt  slurmstepd   socketpair (open_monitor_channel)
//   task_post_fork slurmstepd   "task LOCAL GLOBAL PID" for each task
//   task_init      local task 0 fork, fork again (the sampler is no child of the user's program)
//                               and exec ddp-monitor as the user, with the job's environment
//                               (libnvidia-ml.so.1 is found as the program would find it)
//   task_exit      slurmstepd   after the node's last task: end the stream, wait up to 3 s for
//                               the sampler's summary ("done"), then SIGKILL it
//   exit           slurmstepd   the same, if the tasks never all started or ended
//
// The summary reaches the job's output through local task 0's stderr, which the sampler
// inherits: Slurm reads that pipe until the sampler has written and exited.
#pragma once

#include "planner.hpp"
#include "spank_api.hpp"

namespace ddp::spank {

// In slurmstepd's init_post_opt of a DDP step, before user_init (which decides from the profile
// whether the step is sampled, and which 24.11 with contain_spank runs in a clone with its own
// descriptor table): the channel costs two descriptors; none with --ddp-monitor=off.
void open_monitor_channel(spank_t sp);

// In local task 0's task_init, as the job's user. A problem is said on the task's stderr and
// leaves the step unmonitored; it never fails the task.
void start_monitor(spank_t sp, const plan::StepPlan& step, const plan::GpuFacts& gpus,
                   const plan::NodePlacement& placement);

}  // namespace ddp::spank
