// --ddp-monitor inside Slurm: the sampler is a helper program (helper_channel.hpp) that local
// task 0 starts as the job's user, with the job's environment (libnvidia-ml.so.1 is found as the
// program would find it). slurmstepd tells it the tasks' pids and, after the node's last task,
// waits up to 3 s for its summary ("done") before killing it. The summary reaches the job's
// output through local task 0's stderr, which the sampler inherits: Slurm reads that pipe until
// the sampler has written and exited.
#pragma once

#include <string>

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

// slurmstepd (task_hooks.cpp): a task forked (its "task" line), the node's tasks all ended, exit.
void monitor_task_forked(const std::string& task_line);
void monitor_tasks_ended();
void monitor_exit();

}  // namespace ddp::spank
