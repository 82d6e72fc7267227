// slurmstepd's side of the control channel: what it has heard from a helper's process. Only the
// first line is the plugin's own word (the helper's process writes it before it runs the
// program); everything after it is the user's, since the helper runs the job's environment,
// LD_PRELOAD included. So slurmstepd opens the helper's pidfd itself, for the PID of that first
// line, and keeps it only if that PID is still the process that started at the line's START.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

#include "control.hpp"

namespace ddp::monitor {

enum class Drained {
  More,      // all that has arrived is read; more may come
  Done,      // the helper said done, or the stream ended
  Overflow,  // past the channel's limits: the rest is not read
};

// Reads what has arrived on a non-blocking pipe, never past `deadline` (monotonic_seconds) or the
// channel's limits.
struct Heard;
Drained drain(int fd, Heard& h, double deadline);

struct Heard {
  LineBuffer lines;
  bool launched = false;         // "helper PID START", the first line
  long pid = 0;                  // that PID
  std::uint64_t start_time = 0;  // and its start (proc(5)): with the PID, one process for good
  int pidfd = -1;  // the helper's, when the PID was still that process as the line was read

  Heard() = default;
  Heard(const Heard&) = delete;
  Heard& operator=(const Heard&) = delete;
  ~Heard();

 private:
  friend Drained drain(int fd, Heard& h, double deadline);
  bool first_ = true;  // the first line not yet read
};

// Whether `pid` is still the process that started at `start_time` (and has not ended).
bool same_process(long pid, std::uint64_t start_time);

double monotonic_seconds();

}  // namespace ddp::monitor
