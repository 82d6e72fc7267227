// Time a watching loop did not run: its process stopped with the job (scontrol suspend, gang
// scheduling: every process of the step gets SIGSTOP), its cgroup frozen, or the loop starved of
// CPU. After such a gap every peer's timer would say "silent for longer than the time-out", though
// nothing was wrong but the pause. So each loop asks after every wake how long it was away beyond
// what it meant to sleep, and discounts that time: silence while the watcher itself was away is
// nobody's.
// The failure watch (watch/) and libddp's heartbeat (runtime/src/peer_watch.hpp) both judge
// silence this way.
//
// A gap is a wake more than twice the loop's longest sleep after the one before (the loop wakes
// at least once per `longest_sleep`), on the monotonic clock every timer of the watches runs on.
// A suspended node needs nothing: that clock stands still meanwhile, so no timer saw the time
// (counting it, from the boot clock, moved the timers past the present and delayed every
// judgement after the resume by the suspension's length). Pure: the tests drive it with made-up
// times.
#pragma once

#include <chrono>
#include <cstdint>

namespace ddp {

class GapDetector {
 public:
  using Clock = std::chrono::steady_clock;
  using Ms = std::chrono::milliseconds;

  explicit GapDetector(Ms longest_sleep) : longest_(longest_sleep) {}
  // The time lost since the previous call: 0 normally; for a gap, the time beyond the longest
  // sleep. The first call is never a gap.
  Ms update(Clock::time_point now);

 private:
  Ms longest_;
  bool started_ = false;
  Clock::time_point last_{};
};

}  // namespace ddp
