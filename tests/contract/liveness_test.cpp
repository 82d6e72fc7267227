#include "liveness.hpp"

#include <gtest/gtest.h>

using ddp::Liveness;
using std::chrono::milliseconds;
using std::chrono::seconds;

namespace {

Liveness::Clock::time_point at(double s) {
  return Liveness::Clock::time_point(
      std::chrono::duration_cast<Liveness::Clock::duration>(std::chrono::duration<double>(1000 + s)));
}

}  // namespace

TEST(Liveness, AMemberNeverHeardIsNeverJudged) {
  Liveness l(3);
  EXPECT_FALSE(l.any_quiet_for(at(1000), seconds(45)));
  EXPECT_TRUE(l.all_quiet_for(at(1000), seconds(45)));
  EXPECT_EQ(l.next_quiet(seconds(45)), Liveness::Clock::time_point::max());
  EXPECT_EQ(l.heard_count(), 0u);
  l.heard(7, at(0));  // out of range: ignored
  EXPECT_EQ(l.heard_count(), 0u);
}

TEST(Liveness, AMemberHeardThenQuietPastTheTimeOutIsSilentUnlessItEnded) {
  Liveness l(3);
  l.heard(1, at(1));
  l.heard(2, at(2));
  EXPECT_FALSE(l.any_quiet_for(at(46), seconds(45)));
  EXPECT_TRUE(l.any_quiet_for(at(46.5), seconds(45)));
  EXPECT_EQ(l.quiet_for(at(46.5), seconds(45)), std::vector<std::size_t>{1});
  EXPECT_EQ(l.next_quiet(seconds(45)), at(46) + milliseconds(1));
  l.ended(1);
  EXPECT_FALSE(l.any_quiet_for(at(46.5), seconds(45)));
  l.heard(1, at(50));  // an ended member's beats change nothing
  EXPECT_TRUE(l.has_ended(1));
  EXPECT_EQ(l.quiet_for(at(100), seconds(45)), std::vector<std::size_t>{2});
  EXPECT_EQ(l.heard_count(), 2u);
}

TEST(Liveness, TheQuietestComesFirstThenTheLowestIndex) {
  Liveness l(5);
  l.heard(4, at(1));
  l.heard(3, at(2));
  l.heard(1, at(2));
  l.heard(2, at(9));
  EXPECT_EQ(l.quiet_for(at(60), seconds(45)), (std::vector<std::size_t>{4, 1, 3, 2}));
  EXPECT_EQ(l.quiet_for(at(50), seconds(45)), (std::vector<std::size_t>{4, 1, 3}));
  EXPECT_FALSE(l.all_quiet_for(at(50), seconds(45)));  // 2 was heard 41 s ago
  EXPECT_TRUE(l.all_quiet_for(at(54.5), seconds(45)));
  l.heard(4, at(53));  // heard again: now the latest
  EXPECT_EQ(l.quiet_for(at(54.5), seconds(45)), (std::vector<std::size_t>{1, 3, 2}));
}

TEST(Liveness, TimeTheWatcherDidNotRunIsNobodysSilence) {
  Liveness l(3);
  l.heard(1, at(1));
  l.heard(2, at(10));
  l.discount(seconds(100));  // the watcher was stopped for 100 s
  EXPECT_FALSE(l.any_quiet_for(at(140), seconds(45)));
  EXPECT_EQ(l.quiet_for(at(147), seconds(45)), std::vector<std::size_t>{1});
  EXPECT_EQ(l.last(2), at(110));
  l.discount(milliseconds(0));
  EXPECT_EQ(l.last(2), at(110));
}
