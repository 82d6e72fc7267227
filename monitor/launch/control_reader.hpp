// slurmstepd's side of the control channel: what it has heard from a helper's process. Only the
// identity line is the plugin's own word (the helper's process writes it, on a pipe of its own,
// before it runs the program); everything on the channel is the user's, since the helper runs
// the job's environment, LD_PRELOAD included. So slurmstepd opens the helper's pidfd itself, for
// the identity's PID, and keeps it only if that PID is still the process that started at START.
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

struct Heard;
// Reads the identity pipe (non-blocking): "helper PID START", and the pidfd for it.
void take_identity(int fd, Heard& h);
// Reads what has arrived on the helper's non-blocking pipe, never past `deadline`
// (monotonic_seconds) or the channel's limits.
Drained drain(int fd, Heard& h, double deadline);

struct Heard {
  LineBuffer lines;
  bool launched = false;         // "helper PID START" from the identity pipe
  long pid = 0;                  // that PID
  std::uint64_t start_time = 0;  // and its start (proc(5)): with the PID, one process for good
  int pidfd = -1;  // the helper's, when the PID was still that process as the line was read

  Heard() = default;
  Heard(const Heard&) = delete;
  Heard& operator=(const Heard&) = delete;
  ~Heard();
};

// Whether `pid` is still the process that started at `start_time` (and has not ended).
bool same_process(long pid, std::uint64_t start_time);

double monotonic_seconds();

}  // namespace ddp::monitor
