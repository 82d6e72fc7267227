// Whether a rank that has not ended is frozen, from what /proc shows of it: stopped (state T) for
// the whole time-out, or in uninterruptible sleep (state D) for the whole time-out without using
// CPU time or doing I/O. A rank that waits (state S: a barrier, a collective, a slow peer) or
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
  // Stopped or Hung once the state has held for `timeout` (and keeps saying so); else nullopt.
  std::optional<How> update(const TaskSample& s, Clock::time_point now, Ms timeout);
  // Seconds since the state began (for the message).
  unsigned seconds(Clock::time_point now) const;

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
