// The step's tasks on this node, as slurmstepd reported them (monitor/launch/control.hpp): which are still
// running, which ended and how, which are frozen, and how to end them. Each task is held by a
// pidfd opened from its pid and checked against the start time slurmstepd read, so a signal never
// reaches another process that got a recycled pid.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "frozen.hpp"
#include "control.hpp"

namespace ddp::watch {

struct LocalTask {
  unsigned local = 0;
  unsigned global = 0;
  long pid = 0;
  std::uint64_t start_time = 0;
  int pidfd = -1;
  bool ended = false;
  int status = 0;
  // When its pidfd turned readable: the moment it died, before slurmstepd reaped it and long
  // before the others lost their connections to it (0: not seen).
  std::int64_t gone_ns = 0;
  FrozenClock clock;
  bool frozen_said = false;
};

struct FrozenTask {
  unsigned global = 0;
  How how = How::Stopped;
  unsigned seconds = 0;
};

class LocalTasks {
 public:
  explicit LocalTasks(std::string proc_root = "/proc") : proc_(std::move(proc_root)) {}
  ~LocalTasks();
  LocalTasks(const LocalTasks&) = delete;
  LocalTasks& operator=(const LocalTasks&) = delete;

  void forked(const monitor::ControlMessage& line);
  // The task that ended, or nullptr for one never reported as forked.
  const LocalTask* ended(const monitor::ControlMessage& line);
  // Ranks frozen for the time-out (state D: hung_timeout), each said once.
  std::vector<FrozenTask> frozen(Clock::time_point now, Ms timeout, Ms hung_timeout);
  // The watch did not run for GAP: no task's stop or hang during it counts.
  void discount(Ms gap);
  // The rank's stop was its job's suspension: its clock starts again, and it may be found again.
  void judge_again(unsigned global);
  // Whether the rank is in state T now.
  bool stopped(unsigned global) const;
  // Sends SIG to every task still running (stopped ones get SIGKILL: nothing else reaches them).
  void signal_running(int sig);
  bool any_running() const;
  // The pidfds of tasks not yet seen to die, to poll; and what a readable one means.
  void pidfds(std::vector<int>& out) const;
  void died(int pidfd, std::int64_t wall_ns);
  std::vector<unsigned> ranks() const;

 private:
  bool send(LocalTask& t, int sig);
  std::string proc_;
  std::vector<LocalTask> tasks_;
};

}  // namespace ddp::watch
