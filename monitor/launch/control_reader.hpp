// slurmstepd's side of the control channel: what it has heard from the sampler's launcher and
// from the sampler. Only the launcher's line is the plugin's own word (it is the first on the
// channel: the sampler starts only once it is out); everything after it is the user's, since the
// sampler runs the job's environment, LD_PRELOAD included. So a descriptor is taken only with
// that first line, and only if it is a pidfd of the very PID the line names.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

#include "control.hpp"

namespace ddp::monitor {

enum class Drained {
  More,      // all that has arrived is read; more may come
  Done,      // the sampler said done, or the stream ended
  Overflow,  // past the channel's limits: the rest is not read
};

// Reads what has arrived without blocking, never past `deadline` (monotonic_seconds) or the
// channel's limits.
struct Heard;
Drained drain(int fd, Heard& h, double deadline);

struct Heard {
  LineBuffer lines;
  bool launched = false;  // "sampler PID" from the launcher
  long sampler = 0;       // that PID
  int pidfd = -1;         // the sampler's, from the launcher, checked against that PID
  bool hello = false;     // from the sampler, for kernels without pidfds:
  long pid = 0;           //   its PID and start time (proc(5)), to tell a reused PID
  std::uint64_t start_time = 0;

  Heard() = default;
  Heard(const Heard&) = delete;
  Heard& operator=(const Heard&) = delete;
  ~Heard();

 private:
  friend Drained drain(int fd, Heard& h, double deadline);
  int offered_ = -1;   // the descriptor that came with the first bytes, until its line is read
  bool first_ = true;  // the first line not yet read
};


double monotonic_seconds();

// The launcher's side: one whole line with a descriptor attached (none when fd < 0); true once
// all of it is on the channel. Never blocks; async-signal-safe (sendmsg only).
bool send_line_with_fd(int socket, const char* text, std::size_t size, int fd) noexcept;

}  // namespace ddp::monitor
