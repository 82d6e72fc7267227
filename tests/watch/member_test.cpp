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
  w::Member m(config(), at(0));
  m.heard_head(at(0));
  w::Datagram fail;
  fail.type = w::Datagram::Type::Fail;
  const auto id = m.send_reliably(fail, at(1));
  EXPECT_EQ(count(m.due(at(1)), w::Datagram::Type::Fail), 1u);
  EXPECT_EQ(count(m.due(at(1.1)), w::Datagram::Type::Fail), 0u);
  EXPECT_EQ(count(m.due(at(1.3)), w::Datagram::Type::Fail), 1u);
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
