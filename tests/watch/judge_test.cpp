#include "judge.hpp"

#include <gtest/gtest.h>

#include "watch_time.hpp"

namespace w = ddp::watch;
using ddp::watch::test::at;
using std::chrono::seconds;

namespace {

w::Failure exit_of(unsigned rank, unsigned node, double when, int code = 1) {
  w::Failure f;
  f.how = w::How::Exit;
  f.rank = rank;
  f.node = node;
  f.code = code;
  f.at_ns = at(when).wall_ns;
  return f;
}

w::JudgeConfig config(unsigned nodes) { return {nodes, seconds(45), seconds(1), 500000000}; }

}  // namespace

TEST(WatchJudge, TheEarliestFailureWinsAfterTheSettleTime) {
  w::Judge j(config(2), at(0));
  j.heard(1, "n2", "2-3", at(1));
  // An innocent rank on the head's node is seen first; the culprit on n2 raised earlier.
  j.failed(exit_of(0, 0, 10.2), at(10.3));
  EXPECT_FALSE(j.verdict(at(10.5)));
  j.failed(exit_of(3, 1, 10.1), at(10.6));
  const auto v = j.verdict(at(11.3));
  ASSERT_TRUE(v);
  EXPECT_EQ(v->first.rank, 3u);
  EXPECT_EQ(v->also.at("exit code 1"), 1u);
  EXPECT_FALSE(v->unreachable);
  EXPECT_FALSE(j.verdict(at(12)));  // once
}

TEST(WatchJudge, AFailureToldTwiceCountsOnce) {
  w::Judge j(config(2), at(0));
  j.failed(exit_of(3, 1, 1), at(1));
  j.failed(exit_of(3, 1, 1), at(1.1));
  const auto v = j.verdict(at(3));
  ASSERT_TRUE(v);
  EXPECT_TRUE(v->also.empty());
}

TEST(WatchJudge, ASilentNodeFailsAfterTheTimeoutOnlyOnceHeard) {
  w::Judge j(config(3), at(0));
  j.heard(1, "n2", "2-3", at(1));
  // n3 never spoke: its watch may not run; it is not judged.
  EXPECT_FALSE(j.verdict(at(40)));
  j.heard(1, "", "", at(40));
  EXPECT_FALSE(j.verdict(at(85)));
  const auto v = j.verdict(at(85.2));
  ASSERT_TRUE(v);
  EXPECT_EQ(v->first.how, w::How::Silent);
  EXPECT_EQ(v->first.host, "n2");
  EXPECT_EQ(v->first.ranks, "2-3");
  EXPECT_EQ(v->first.seconds, 45u);
  EXPECT_TRUE(v->unreachable);
  EXPECT_EQ(j.heard_count(), 2u);
}

TEST(WatchJudge, ANodeThatIsDoneIsNeverSilent) {
  w::Judge j(config(2), at(0));
  j.heard(1, "n2", "1", at(1));
  j.done(1);
  EXPECT_FALSE(j.verdict(at(100)));
  EXPECT_TRUE(j.heard_all_done(at(2)));
}

TEST(WatchJudge, ManySilentNodesNameTheLongestSilentAndCountTheRest) {
  w::Judge j(config(1000), at(0));
  for (unsigned n = 1; n < 1000; ++n) j.heard(n, "n" + std::to_string(n + 1), std::to_string(n), at(1));
  for (unsigned n = 1; n < 1000; ++n)
    if (n % 10 != 0) j.heard(n, "", "", at(30));
  j.heard(500, "", "", at(0.5));  // not earlier: heard() only moves forward in practice
  const auto v = j.verdict(at(46.5));
  ASSERT_TRUE(v);
  EXPECT_EQ(v->first.how, w::How::Silent);
  EXPECT_EQ(v->other_silent_nodes, 98u);
}

TEST(WatchJudge, AFailureWithSilentNodesSaysBothAndNeedsSlurm) {
  w::Judge j(config(3), at(0));
  j.heard(1, "n2", "1", at(1));
  j.heard(2, "n3", "2", at(1));
  j.heard(2, "n3", "2", at(50));
  j.failed(exit_of(2, 2, 49), at(50));
  const auto v = j.verdict(at(51));
  ASSERT_TRUE(v);
  EXPECT_EQ(v->first.rank, 2u);
  EXPECT_EQ(v->other_silent_nodes, 1u);
  EXPECT_TRUE(v->unreachable);
}

TEST(WatchJudge, NextCheckFollowsTheSettleAndTheSilences) {
  w::Judge j(config(2), at(0));
  EXPECT_EQ(j.next_check(at(0)), w::Clock::time_point::max());
  j.heard(1, "n2", "1", at(2));
  EXPECT_GT(j.next_check(at(2)), at(46.9).mono);
  j.failed(exit_of(1, 1, 3), at(3));
  EXPECT_TRUE(j.pending());
  EXPECT_EQ(j.next_check(at(3)), at(4).mono);
}

TEST(WatchJudge, ARankKilledBeatsThePeersThatLostItAtTheSameMoment) {
  w::Judge j(config(2), at(0));
  // Rank 2 was killed; its watch saw the death 30 ms after rank 1 and 3 raised for the lost peer.
  j.failed(exit_of(1, 0, 10.000), at(10.1));
  j.failed(exit_of(3, 1, 10.010), at(10.1));
  w::Failure killed = exit_of(2, 1, 10.030);
  killed.how = w::How::Signal;
  killed.code = 9;
  j.failed(killed, at(10.1));
  auto v = j.verdict(at(11.2));
  ASSERT_TRUE(v);
  EXPECT_EQ(v->first.rank, 2u);
  EXPECT_EQ(v->also.at("exit code 1"), 2u);
  // A rank that raised well before is the cause, whatever ends later.
  w::Judge k(config(2), at(0));
  k.failed(exit_of(3, 1, 10.0), at(10.1));
  killed.at_ns = at(10.8).wall_ns;
  k.failed(killed, at(10.9));
  v = k.verdict(at(11.2));
  ASSERT_TRUE(v);
  EXPECT_EQ(v->first.rank, 3u);
}
