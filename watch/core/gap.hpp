// Time the watch itself did not run: the job suspended (scontrol suspend, gang scheduling: its
// processes, the watch's included, get SIGSTOP), its cgroup frozen, or the node suspended
// (CLOCK_MONOTONIC stands still then, CLOCK_BOOTTIME does not). After such a gap every node's
// timers would say "silent for longer than the time-out" and every stopped rank "stopped for
// hours", though nothing was wrong but the pause. So the loop asks after each wake how long it
// was away beyond what it meant to sleep, and the judge, the member and the frozen clocks
// discount that time: silence and stops while the watch was not running do not count.
//
// A gap is a wake more than twice the loop's longest sleep after the one before (the loop wakes
// at least once per `longest_sleep`), or the boot clock running ahead of the monotonic one.
// Pure, as the judge: the tests drive it with made-up times.
#pragma once

#include "failure.hpp"

namespace ddp::watch {

class GapDetector {
 public:
  explicit GapDetector(Ms longest_sleep) : longest_(longest_sleep) {}
  // The time lost since the previous call: 0 normally; for a gap, the time beyond the longest
  // sleep plus the time the node was suspended. The first call is never a gap.
  Ms update(Now now);

 private:
  Ms longest_;
  bool started_ = false;
  Now last_{};
};

}  // namespace ddp::watch
