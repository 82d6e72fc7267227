#include "member.hpp"

#include <gtest/gtest.h>

#include "watch_time.hpp"

namespace w = ddp::watch;
using ddp::watch::test::at;
using std::chrono::milliseconds;
using std::chrono::seconds;

namespace {

w::MemberConfig config() {
  w::MemberConfig c;
  c.node = 2;
  c.host = "n3";
  c.ranks = "4-5";
  c.timeout = seconds(45);
  c.interval = milliseconds(4500);
  c.phase = milliseconds(1000);
  return c;
}

std::size_t count(const std::vector<w::Datagram>& v, w::Datagram::Type t) {
  std::size_t n = 0;
  for (const auto& d : v) n += d.type == t;
  return n;
}

}  // namespace

TEST(WatchMember, BeatsOftenUntilTheHeadAnswersThenOnItsOwnPhase) {
  w::Member m(config(), at(0));
  auto out = m.due(at(0));
  ASSERT_EQ(count(out, w::Datagram::Type::Beat), 1u);
  EXPECT_EQ(out[0].host, "n3");
  EXPECT_EQ(out[0].ranks, "4-5");
  EXPECT_TRUE(m.due(at(0.2)).empty());
  EXPECT_EQ(count(m.due(at(0.5)), w::Datagram::Type::Beat), 1u);
  m.heard_head(at(0.6));
  EXPECT_TRUE(m.due(at(1.5)).empty());
  EXPECT_EQ(count(m.due(at(1.6)), w::Datagram::Type::Beat), 1u);
  EXPECT_TRUE(m.due(at(5)).empty());
  EXPECT_EQ(count(m.due(at(6.1)), w::Datagram::Type::Beat), 1u);
}

TEST(WatchMember, AFailureIsSentUntilAckedAndAloneAfterThat) {
  w::MemberConfig c = config();
  c.node = 1;  // the first to act alone (MembersActAloneInTiersByTheirIndex)
  w::Member m(c, at(0));
  m.heard_head(at(0));
  w::Datagram fail;
  fail.type = w::Datagram::Type::Fail;
  const auto id = m.send_reliably(fail, at(1));
  EXPECT_EQ(count(m.due(at(1)), w::Datagram::Type::Fail), 1u);
  EXPECT_EQ(count(m.due(at(1.1)), w::Datagram::Type::Fail), 0u);
  EXPECT_EQ(count(m.due(at(1.4)), w::Datagram::Type::Fail), 1u);
  EXPECT_EQ(m.alarm(at(3.9)), w::Member::Alarm::None);
  EXPECT_EQ(m.alarm(at(4.0)), w::Member::Alarm::Alone);
  m.acked(id);
  EXPECT_TRUE(m.all_acked());
  EXPECT_EQ(m.alarm(at(4.0)), w::Member::Alarm::None);
}

TEST(WatchMember, TheHeadIsLostOnlyAfterItWasHeardAndNotAfterItsBye) {
  w::Member never(config(), at(0));
  EXPECT_EQ(never.alarm(at(1000)), w::Member::Alarm::None);

  w::Member m(config(), at(0));
  m.heard_head(at(10));
  EXPECT_EQ(m.alarm(at(55)), w::Member::Alarm::None);
  EXPECT_EQ(m.alarm(at(55.1)), w::Member::Alarm::HeadLost);
  EXPECT_EQ(m.head_silent_s(at(55.1)), 45u);

  w::Member left(config(), at(0));
  left.heard_head(at(10));
  left.head_bye();
  EXPECT_EQ(left.alarm(at(100)), w::Member::Alarm::None);
}

namespace {

w::Failure exit_of(unsigned rank, double when) {
  w::Failure f;
  f.rank = rank;
  f.node = 2;
  f.code = 1;
  f.at_ns = at(when).wall_ns;
  return f;
}

}  // namespace

TEST(WatchMember, ANodeSendsOneFailHoweverManyOfItsRanksFail) {
  w::Member m(config(), at(0));
  m.heard_head(at(0));
  w::FailureCounts counts;
  std::uint64_t id = 0;
  for (unsigned r = 0; r < 8; ++r) {
    counts["exit code 1"] = r + 1;
    id = m.report(exit_of(4, 1), counts, at(1));
  }
  auto out = m.due(at(1));
  ASSERT_EQ(count(out, w::Datagram::Type::Fail), 1u);
  for (const auto& d : out)
    if (d.type == w::Datagram::Type::Fail) {
      EXPECT_EQ(d.id, id);
      EXPECT_EQ(d.counts.at("exit code 1"), 8u);
      EXPECT_EQ(d.failure.rank, 4u);
    }
  // One more rank fails after it was sent: the same message, a new id, at once.
  counts["SIGKILL"] = 1;
  const auto newer = m.report(exit_of(4, 1), counts, at(1.05));
  EXPECT_GT(newer, id);
  EXPECT_EQ(count(m.due(at(1.05)), w::Datagram::Type::Fail), 1u);
  // The head's ack of the older one leaves the newer pending; the newer's ack clears it.
  m.acked(id);
  EXPECT_FALSE(m.all_acked());
  m.acked(newer);
  EXPECT_TRUE(m.all_acked());
}

TEST(WatchMember, AfterTheEndNothingIsRepeatedAndTheNodeNeverActsAlone) {
  w::Member m(config(), at(0));
  m.heard_head(at(0));
  (void)m.report(exit_of(4, 1), {{"exit code 1", 1}}, at(1));
  EXPECT_EQ(count(m.due(at(1)), w::Datagram::Type::Fail), 1u);
  m.ended();
  EXPECT_TRUE(m.all_acked());
  EXPECT_EQ(count(m.due(at(2)), w::Datagram::Type::Fail), 0u);
  EXPECT_EQ(m.alarm(at(10)), w::Member::Alarm::None);
  (void)m.report(exit_of(5, 2), {{"exit code 1", 2}}, at(2));
  EXPECT_EQ(count(m.due(at(3)), w::Datagram::Type::Fail), 0u);
}

TEST(WatchMember, RepeatsAreJitteredApart) {
  // Two nodes that failed at the same instant do not resend in step forever.
  auto c1 = config(), c2 = config();
  c1.seed = 1;
  c2.seed = 2;
  w::Member a(c1, at(0)), b(c2, at(0));
  a.heard_head(at(0));
  b.heard_head(at(0));
  (void)a.report(exit_of(4, 1), {{"exit code 1", 1}}, at(1));
  (void)b.report(exit_of(4, 1), {{"exit code 1", 1}}, at(1));
  a.due(at(1));
  b.due(at(1));
  EXPECT_NE(a.next_event(at(1)), b.next_event(at(1)));
  EXPECT_GE(a.next_event(at(1)), at(1.25).mono);
  EXPECT_LE(a.next_event(at(1)), at(1.32).mono);
}

// With the head gone every member's ranks fail: the members do not all ask slurmctld at once.
TEST(WatchMember, MembersActAloneInTiersByTheirIndex) {
  const auto wait_of = [](unsigned node) {
    w::MemberConfig c;
    c.node = node;
    return std::chrono::duration_cast<std::chrono::milliseconds>(w::alone_wait(c)).count();
  };
  EXPECT_EQ(wait_of(1), 3000);
  EXPECT_EQ(wait_of(2), 8000);
  EXPECT_EQ(wait_of(3), 8000);
  EXPECT_EQ(wait_of(4), 13000);
  EXPECT_EQ(wait_of(7), 13000);
  EXPECT_EQ(wait_of(8192), 68000);
  EXPECT_EQ(wait_of(9999), 68000);

  w::MemberConfig c = config();
  c.node = 5;
  w::Member m(c, at(0));
  m.heard_head(at(0));
  w::Datagram fail;
  fail.type = w::Datagram::Type::Fail;
  (void)m.send_reliably(fail, at(1));
  EXPECT_EQ(m.alarm(at(13.9)), w::Member::Alarm::None);
  EXPECT_EQ(m.alarm(at(14.0)), w::Member::Alarm::Alone);
  // The loop wakes for it: no later than the moment it is due.
  EXPECT_LE(m.next_event(at(13.0)), at(14.0).mono);
}

// This node's clock 50 ms behind the head's, 1 ms each way on the wire: its failures reach the
// head in the head's time, from the answer with the shortest round trip.
TEST(WatchMember, FailuresGoInTheHeadsClock) {
  // at() makes its wall times from doubles: a microsecond is their grain here.
  constexpr std::int64_t kMs = 1000000, kUs = 1000;
  w::Member m(config(), at(0));
  const auto beat = m.due(at(0));
  ASSERT_EQ(count(beat, w::Datagram::Type::Beat), 1u);
  const std::int64_t sent = beat.front().sent_ns;
  EXPECT_EQ(sent, at(0).wall_ns);
  EXPECT_EQ(m.head_clock_offset_ns(), 0);
  m.heard_head_beat(sent, sent + 51 * kMs, sent + 52 * kMs, at(0.003));
  EXPECT_NEAR(m.head_clock_offset_ns(), 50 * kMs, kUs);
  // A slower answer, 30 ms on the way back, is not believed over it.
  m.heard_head_beat(at(5).wall_ns, at(5).wall_ns + 51 * kMs, at(5).wall_ns + 52 * kMs, at(5.032));
  EXPECT_NEAR(m.head_clock_offset_ns(), 50 * kMs, kUs);
  // Nothing echoed (not an answer to a beat), or times that cannot be: no estimate from it.
  m.heard_head_beat(0, at(6).wall_ns, at(6).wall_ns, at(6));
  m.heard_head_beat(at(7).wall_ns, at(7).wall_ns, at(7).wall_ns - 1, at(7));
  EXPECT_NEAR(m.head_clock_offset_ns(), 50 * kMs, kUs);

  w::Failure f;
  f.rank = 4;
  f.at_ns = at(10).wall_ns;
  (void)m.report(f, {{"exit code 1", 1}}, at(10));
  const auto out = m.due(at(10));
  ASSERT_EQ(count(out, w::Datagram::Type::Fail), 1u);
  for (const auto& d : out) {
    if (d.type != w::Datagram::Type::Fail) continue;
    EXPECT_NEAR(d.failure.at_ns, at(10).wall_ns + 50 * kMs, kUs);
  }
}
