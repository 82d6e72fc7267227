// What the failure watch knows about one failed rank (or silent node), wherever it was seen: the
// node's watch reads it from slurmstepd and the rank's error file, sends it to the head node's
// watch, which picks the first and says it once (judge.hpp, verdict.hpp).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace ddp::watch {

using Clock = std::chrono::steady_clock;
using Ms = std::chrono::milliseconds;

// Both clocks at one instant: timers run on the monotonic one, and failures seen on different
// nodes are ordered by the wall clock (the nodes' clocks agree to NTP's milliseconds).
struct Now {
  Clock::time_point mono;
  std::int64_t wall_ns = 0;
  static Now read();
};

enum class How {
  Exit,     // exited with a code other than 0
  Signal,   // ended by a signal
  Stopped,  // stopped (state T: SIGSTOP, SIGTSTP) for the whole time-out
  Hung,     // uninterruptible sleep (state D) without CPU time or I/O for the whole time-out
  Silent,   // its node stopped answering the watch
};

struct Failure {
  How how = How::Exit;
  unsigned rank = 0;     // the global rank (Silent: the node's first rank)
  unsigned node = 0;     // the node's index in the step
  std::string host;      // the node's name
  std::string ranks;     // Silent: the node's ranks ("2-3")
  int code = 0;          // Exit: the exit code; Signal: the signal number
  std::int64_t at_ns = 0;  // wall clock: when the rank raised (its error file), else ended
  unsigned seconds = 0;  // Stopped, Hung, Silent: for how long
  std::string error;     // "ValueError: bad batch", from the rank's error file
  std::string where;     // "File \"train.py\", line 57, in step", likewise
};

// "exited with code 1", "was killed by signal 9 (SIGKILL)", "has been stopped for 45 s"...
std::string how_text(const Failure& f);
// The short form the verdict counts others by: "exit code 1", "SIGKILL", "stopped".
std::string how_short(const Failure& f);
// "SIGKILL" for 9; "signal 70" for a number without a name.
std::string signal_name(int signal);

}  // namespace ddp::watch
