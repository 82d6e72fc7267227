#include "gap.hpp"

namespace ddp::watch {

Ms GapDetector::update(Now now) {
  if (!started_) {
    started_ = true;
    last_ = now;
    return Ms(0);
  }
  const auto mono = std::chrono::duration_cast<Ms>(now.mono - last_.mono);
  // Suspended: the boot clock advanced by more than the monotonic one.
  const Ms asleep((now.boot_ns - last_.boot_ns) / 1000000 - mono.count());
  last_ = now;
  Ms lost(0);
  if (mono > 2 * longest_) lost += mono - longest_;
  if (asleep > longest_) lost += asleep;
  return lost;
}

}  // namespace ddp::watch
