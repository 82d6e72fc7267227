// Suspend and resume (scontrol suspend, gang scheduling, a frozen cgroup, a suspended node) must
// not end a healthy step: the watch's own loop sees the gap, and the time away counts for nobody.
#include "gap.hpp"

#include <gtest/gtest.h>

#include "frozen.hpp"
#include "judge.hpp"
#include "member.hpp"
#include "watch_time.hpp"

namespace w = ddp::watch;
using ddp::watch::test::at;
using std::chrono::milliseconds;
using std::chrono::seconds;

namespace {

// The watch's loop: a wake at each of these instants.
w::Ms wake(ddp::GapDetector& g, const w::Now& n) { return g.update(n.mono); }

w::Ms loop(ddp::GapDetector& g, std::initializer_list<w::Now> wakes) {
  w::Ms lost(0);
  for (const w::Now& n : wakes) lost += wake(g, n);
  return lost;
}

}  // namespace

TEST(WatchGap, AWakeOnTimeIsNoGap) {
  ddp::GapDetector g(seconds(1));
  EXPECT_EQ(loop(g, {at(0), at(1), at(2), at(3.9), at(4.2)}), w::Ms(0));
}

TEST(WatchGap, ASuspendedJobIsAGapOfItsLength) {
  ddp::GapDetector g(seconds(1));
  EXPECT_EQ(loop(g, {at(0), at(1)}), w::Ms(0));
  // SIGSTOP at about 1.5, SIGCONT an hour later.
  EXPECT_EQ(wake(g, at(3601)), seconds(3599));
  EXPECT_EQ(wake(g, at(3602)), w::Ms(0));
}

TEST(WatchGap, TheJudgeCountsNoSilenceWhileTheHeadWasSuspended) {
  w::Judge j({3, seconds(45), seconds(1), 500000000}, at(0));
  ddp::GapDetector g(seconds(1));
  wake(g, at(9));
  j.heard(1, "n2", "2-3", at(10));
  j.heard(2, "n3", "4-5", at(10));
  // The whole job stopped from 10.5 to 3610.5; the head's watch wakes first.
  const w::Ms gap = wake(g, at(3610.5));
  EXPECT_GE(gap, seconds(3599));
  j.discount(gap);
  EXPECT_FALSE(j.verdict(at(3610.5)));
  EXPECT_FALSE(j.verdict(at(3620)));
  // A node that stays silent after the resume is still lost, a time-out later.
  j.heard(1, "", "", at(3611));
  const auto v = j.verdict(at(3660));
  ASSERT_TRUE(v);
  EXPECT_EQ(v->first.node, 2u);
}

TEST(WatchGap, AMemberCountsNoSilenceOfTheHeadWhileItWasSuspended) {
  w::MemberConfig c;
  c.node = 1;
  c.timeout = seconds(45);
  w::Member m(c, at(0));
  m.heard_head(at(10));
  w::Datagram fail;
  fail.type = w::Datagram::Type::Fail;
  const auto id = m.send_reliably(fail, at(10.2));
  m.discount(seconds(3600));
  EXPECT_EQ(m.alarm(at(3611)), w::Member::Alarm::None);
  // The wait for the ack counts from the resume too.
  EXPECT_EQ(m.alarm(at(3613.3)), w::Member::Alarm::Alone);
  m.acked(id);
  EXPECT_EQ(m.alarm(at(3655)), w::Member::Alarm::None);
  EXPECT_EQ(m.alarm(at(3656)), w::Member::Alarm::HeadLost);
}

TEST(WatchGap, RanksStoppedWithTheJobAreNotFrozen) {
  w::FrozenClock clock;
  w::TaskSample stopped;
  stopped.state = 'T';
  // Seen stopped just before the watch itself was stopped; seen again right after SIGCONT
  // reached the watch, before it reached the rank.
  EXPECT_FALSE(clock.update(stopped, at(10).mono, seconds(45), seconds(300)));
  clock.discount(seconds(3600));
  EXPECT_FALSE(clock.update(stopped, at(3611).mono, seconds(45), seconds(300)));
  // A rank that stays stopped after the resume is frozen, a time-out later.
  EXPECT_EQ(clock.update(stopped, at(3656).mono, seconds(45), seconds(300)), w::How::Stopped);
}
