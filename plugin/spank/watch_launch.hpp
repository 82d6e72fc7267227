// The failure watch inside Slurm (the program is watch/, ddp-watch): a helper program
// (helper_channel.hpp) that local task 0 starts on every node of a DDP step, as the job's user.
// slurmstepd sees what the watch needs and nothing in the task can: each task's pid as it is
// forked and its exit status as it is reaped, which it passes on as lines; the watch decides.
//
//   init_post_opt  slurmstepd    the channel (none with --ddp-watch=off)
//   task_init      every task    its error file's directory, made private by the user's own hand
//                  local task 0  ddp-watch, with the step's key in its environment alone
//   task_post_fork slurmstepd    "task LOCAL GLOBAL PID START"
//   task_exit      slurmstepd    "exit LOCAL GLOBAL STATUS WALL"; after the node's last task the
//                                stream ends and slurmstepd waits up to 3 s for the watch's
//                                `done`: it tells the other nodes first (a verdict, or that this
//                                node ended normally), then Slurm may end its processes
#pragma once

#include <optional>
#include <string>

#include "planner.hpp"
#include "spank_api.hpp"

namespace ddp::spank {

// init_post_opt, before user_init (see open_monitor_channel): two descriptors.
void open_watch_channel(spank_t sp);

// Every task's task_init, as the job's user: the step's error file directory, mode 0700 and the
// user's own. nullopt when it is ready; else why not (the task then gets no error file).
std::optional<std::string> prepare_error_dir(const plan::WatchPlan& watch);

// Local task 0's task_init. A problem is said on the task's stderr; the step then runs without
// the watch on this node, and the task is never failed for it.
void start_watch(spank_t sp, const plan::StepPlan& step, const std::string& key);

// slurmstepd (task_hooks.cpp).
void watch_task_forked(const std::string& task_line);
void watch_task_ended(unsigned local, unsigned global, int status);
void watch_tasks_ended();
void watch_exit();

}  // namespace ddp::spank
