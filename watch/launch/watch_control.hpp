// The control channel between slurmstepd and the node's failure watch: a stream socketpair the
// plugin makes in slurmstepd before the tasks are forked; local task 0 starts the watch with its
// end as fd 3 (monitor/launch/control.hpp does the same for the sampler, and its LineBuffer
// bounds what either side reads). One message per line:
//
//   slurmstepd -> watch   task LOCAL GLOBAL PID START    each task, as forked (START: ticks after
//                                                       boot, proc(5)); a pidfd of the task rides
//                                                       along where the kernel has pidfds
//                         exit LOCAL GLOBAL STATUS WALL  a task ended: its wait status as waitpid
//                                                       gave it, and when (ns since the epoch)
//                         end of stream                 the node's tasks have all ended
//   launcher   -> stepd   watch PID                     written before exec
//   watch      -> stepd   done                          it has said what it had to; it exits
//
// slurmstepd waits a few seconds at most for `done` after the node's last task, so that the
// watch can tell the others before Slurm ends the step's processes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ddp::watch {

inline constexpr int kControlFd = 3;

struct ControlLine {
  enum class Kind { Task, Exit, Launched, Done } kind = Kind::Done;
  unsigned local = 0;
  unsigned global = 0;
  long pid = 0;                  // Task, Launched
  std::uint64_t start_time = 0;  // Task
  int status = 0;                // Exit
  std::int64_t wall_ns = 0;      // Exit
};

std::string task_line(unsigned local, unsigned global, long pid, std::uint64_t start_time);
std::string exit_line(unsigned local, unsigned global, int status, std::int64_t wall_ns);
inline constexpr const char* kLaunchedPrefix = "watch ";
inline constexpr const char* kDoneLine = "done\n";

// nullopt for a line that is no message.
std::optional<ControlLine> parse_control_line(std::string_view line);

}  // namespace ddp::watch
