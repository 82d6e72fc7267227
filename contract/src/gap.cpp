#include "gap.hpp"

namespace ddp {

GapDetector::Ms GapDetector::update(Clock::time_point now) {
  if (!started_) {
    started_ = true;
    last_ = now;
    return Ms(0);
  }
  const auto awake = std::chrono::duration_cast<Ms>(now - last_);
  last_ = now;
  return awake > 2 * longest_ ? awake - longest_ : Ms(0);
}

}  // namespace ddp
