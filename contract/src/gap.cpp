#include "gap.hpp"

#include <ctime>

namespace ddp {

std::int64_t boot_clock_ns() {
  timespec boot{};
  clock_gettime(CLOCK_BOOTTIME, &boot);
  return static_cast<std::int64_t>(boot.tv_sec) * 1000000000 + boot.tv_nsec;
}

GapDetector::Ms GapDetector::update(Clock::time_point mono, std::int64_t boot_ns) {
  if (!started_) {
    started_ = true;
    mono_ = mono;
    boot_ns_ = boot_ns;
    return Ms(0);
  }
  const auto awake = std::chrono::duration_cast<Ms>(mono - mono_);
  // Suspended: the boot clock advanced by more than the monotonic one.
  const Ms asleep((boot_ns - boot_ns_) / 1000000 - awake.count());
  mono_ = mono;
  boot_ns_ = boot_ns;
  Ms lost(0);
  if (awake > 2 * longest_) lost += awake - longest_;
  if (asleep > longest_) lost += asleep;
  return lost;
}

}  // namespace ddp
