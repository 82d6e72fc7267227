// Made-up instants for the watch's pure parts: S seconds into a test, on every clock.
#pragma once

#include "failure.hpp"

namespace ddp::watch::test {

inline Now at(double s) {
  Now n;
  n.mono = Clock::time_point(std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(1000 + s)));
  n.wall_ns = static_cast<std::int64_t>((1700000000 + s) * 1e9);
  return n;
}

}  // namespace ddp::watch::test
