// Whether a rank that has not ended is frozen, from what /proc shows of it: stopped (state T) for
// the whole time-out, or in uninterruptible sleep (state D) without using CPU time or doing I/O
// for the longer D time-out (watch_args.hpp: a file system's failover is not a hang). A rank that waits (state S: a barrier, a collective, a slow peer) or
// works (R, or D with progress: a long checkpoint write) is never frozen, however long it takes;
// a rank under a debugger (state t) is being looked at, not frozen.
#pragma once

#include <cstdint>
#include <optional>

#include "failure.hpp"

namespace ddp::watch {

struct TaskSample {
  char state = 'R';            // proc(5)
  std::uint64_t ticks = 0;     // CPU time used
  std::uint64_t io_bytes = 0;  // rchar + wchar (/proc/PID/io), 0 when unreadable
};

class FrozenClock {
 public:
  // Stopped once state T has held for `timeout`, Hung once state D without progress has held
  // for `hung_timeout` (and keeps saying so); else nullopt.
  std::optional<How> update(const TaskSample& s, Clock::time_point now, Ms timeout, Ms hung_timeout);
  // Seconds since the state began (for the message).
  unsigned seconds(Clock::time_point now) const;
  // The watch did not run for GAP (gap.hpp): a stop or a hang during it does not count (the job
  // was suspended, and its ranks with it).
  void discount(Ms gap) { since_ += gap; }

 private:
  char state_ = 'R';
  std::uint64_t ticks_ = 0;
  std::uint64_t io_ = 0;
  Clock::time_point since_{};
  bool running_ = false;
};

// Reads the task's state from /proc (`proc_root` for tests); nullopt when it has gone.
std::optional<TaskSample> sample_task(const std::string& proc_root, long pid);

}  // namespace ddp::watch
