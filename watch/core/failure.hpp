// What the failure watch knows about one failed rank (or silent node), wherever it was seen: the
// node's watch reads it from slurmstepd and the rank's error file, and sends its node's first,
// with the others counted, to the head node's watch, which picks the root cause among all nodes
// (root_cause() below, judge.hpp) and says it once (verdict_text.hpp).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ddp::watch {

using Clock = std::chrono::steady_clock;
using Ms = std::chrono::milliseconds;

// The clocks at one instant: timers run on the monotonic one (which stands still while the node
// is suspended, gap.hpp), failures seen on different nodes are ordered by the wall clock (the
// nodes' clocks agree to NTP's milliseconds).
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

// Failures this close in time count as simultaneous (root_cause() says how they are ordered).
inline constexpr std::int64_t kSimultaneousNs = 500000000;

// Failed ranks counted by their short form (how_short(): "exit code 1": 7, "SIGKILL": 1).
using FailureCounts = std::map<std::string, unsigned>;

// Which of FAILURES (not empty) is the root cause, by index. The earliest by the wall clock,
// except:
//   - among failures within `simultaneous_ns` of the earliest, a death by a signal wins (a rank
//     killed or crashed takes its peers down within milliseconds, and its death is seen a little
//     late, while theirs are stamped when they raised);
//   - but SIGABRT and SIGPIPE are what a rank dies of when a peer went first (a library's abort
//     on a broken collective, a write to a closed socket): one that comes within a second after
//     another failure is its consequence and never the cause, and they get no signal preference.
std::size_t root_cause(const std::vector<const Failure*>& failures, std::int64_t simultaneous_ns);

// "exited with code 1", "was killed by signal 9 (SIGKILL)", "has been stopped for 45 s"...
std::string how_text(const Failure& f);
// The short form the verdict counts others by: "exit code 1", "SIGKILL", "stopped".
std::string how_short(const Failure& f);
// Whether a rank's end (its wait status) was asked for rather than a failure: a death by SIGTERM,
// SIGINT or SIGHUP (scancel, a time limit, a terminal: Slurm ends the step its own way), or any
// end after the step itself was told to end (`step_signalled`: the watch got one of them too, so
// a rank that caught the signal and exited non-zero is ending on request). Such an end is never
// a root cause, and the watch neither ends the step for it nor hurries Slurm's KillWait.
bool ended_on_request(int wait_status, bool step_signalled);
// "SIGKILL" for 9; "signal 70" for a number without a name.
std::string signal_name(int signal);

}  // namespace ddp::watch
