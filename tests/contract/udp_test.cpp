// The heartbeats' UDP socket (contract/include/udp.hpp) on loopback: a sender connected to the
// listener hears its answers even when it reached the listener by a second address, and learns
// when nobody listens.
#include "udp.hpp"

#include <poll.h>

#include <gtest/gtest.h>

namespace ddp::net {
namespace {

std::optional<std::string> next(const Udp& u, Address& from, bool* refused = nullptr) {
  pollfd p{u.fd(), POLLIN, 0};
  char buf[64];
  for (int i = 0; i < 20; ++i) {
    (void)::poll(&p, 1, 100);
    if (const auto n = u.receive(buf, sizeof buf, from, refused)) return std::string(buf, *n);
    if (refused != nullptr && *refused) return std::nullopt;
  }
  return std::nullopt;
}

// 127.0.0.2 is this machine too, but the kernel's route back to the sender leaves from 127.0.0.1:
// an answer from there would be dropped by a socket connected to 127.0.0.2.
TEST(Udp, TheAnswerLeavesFromTheAddressTheQuestionCameTo) {
  Udp listener, sender;
  ASSERT_FALSE(listener.listen(0));
  ASSERT_NE(listener.local_port(), 0u);
  ASSERT_FALSE(sender.aim("127.0.0.2", listener.local_port()));
  ASSERT_TRUE(sender.send_to_head("ping"));
  Address from;
  ASSERT_EQ(next(listener, from), "ping");
  listener.send(from, "pong");
  Address head;
  EXPECT_EQ(next(sender, head), "pong");
}

TEST(Udp, IPv6IsAnsweredToo) {
  Udp listener, sender;
  ASSERT_FALSE(listener.listen(0));
  if (sender.aim("::1", listener.local_port())) GTEST_SKIP() << "no IPv6 loopback here";
  ASSERT_TRUE(sender.send_to_head("ping6"));
  Address from;
  const auto got = next(listener, from);
  if (!got) GTEST_SKIP() << "the listener is IPv4 only here";
  EXPECT_EQ(*got, "ping6");
  listener.send(from, "pong6");
  Address head;
  EXPECT_EQ(next(sender, head), "pong6");
}

TEST(Udp, ASenderLearnsThatNobodyListens) {
  unsigned port;
  {
    Udp gone;
    ASSERT_FALSE(gone.listen(0));
    port = gone.local_port();
  }
  Udp sender;
  ASSERT_FALSE(sender.aim("127.0.0.1", port));
  (void)sender.send_to_head("anyone?");
  bool refused = false;
  Address from;
  EXPECT_FALSE(next(sender, from, &refused));
  EXPECT_TRUE(refused);
}

// The failure watch's member before the head answered: it sends to every port the head may hold,
// hears the one that answers, and from then on sends only there and hears nobody else.
TEST(Udp, ASenderToSeveralPortsSettlesOnTheOneThatAnswers) {
  Udp squatter, listener, stranger, sender;
  ASSERT_FALSE(squatter.listen(0));
  ASSERT_FALSE(listener.listen(0));
  ASSERT_FALSE(stranger.listen(0));
  const std::vector<std::uint16_t> ports = {static_cast<std::uint16_t>(squatter.local_port()),
                                            static_cast<std::uint16_t>(listener.local_port())};
  ASSERT_FALSE(sender.aim_any("127.0.0.1", ports));
  EXPECT_FALSE(sender.settled());
  ASSERT_TRUE(sender.send_to_head("beat"));
  Address from;
  EXPECT_EQ(next(squatter, from), "beat");  // a port held by someone else gets it too
  ASSERT_EQ(next(listener, from), "beat");
  listener.send(from, "answer");
  Address head;
  ASSERT_EQ(next(sender, head), "answer");
  sender.settle(head);
  EXPECT_TRUE(sender.settled());
  ASSERT_TRUE(sender.send_to_head("beat 2"));
  EXPECT_EQ(next(listener, from), "beat 2");
  Address nothing;
  char buf[16];
  EXPECT_FALSE(squatter.receive(buf, sizeof buf, nothing));
  // Connected now: a datagram from anywhere else is dropped by the kernel.
  stranger.send(from, "forged");
  listener.send(from, "answer 2");
  EXPECT_EQ(next(sender, head), "answer 2");
}

}  // namespace
}  // namespace ddp::net
