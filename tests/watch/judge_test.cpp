#include "judge.hpp"

#include <gtest/gtest.h>

#include <csignal>

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

// A flood on the head's port fills its queue and the kernel drops datagrams, beats among them:
// while it drops, nobody's silence is believed, and a whole time-out without drops must pass.
TEST(WatchJudge, NoNodeIsSilentWhileTheSocketDropsDatagrams) {
  w::Judge j(config(3), at(0));
  j.heard(1, "n2", "2-3", at(1));
  j.heard(2, "n3", "4-5", at(1));
  j.heard(2, "n3", "4-5", at(50));
  j.dropped(at(40));
  EXPECT_FALSE(j.verdict(at(47)));   // n2 silent 46 s, but the socket dropped 7 s ago
  EXPECT_FALSE(j.verdict(at(85)));
  EXPECT_GE(j.next_check(at(47)), at(85).mono);  // no busy wake meanwhile
  const auto v = j.verdict(at(85.1));
  ASSERT_TRUE(v);
  EXPECT_EQ(v->first.how, w::How::Silent);
  EXPECT_EQ(v->first.node, 1u);
  // A gap (the head's watch stopped) moves the drops on like everyone's silence.
  w::Judge k(config(2), at(0));
  k.heard(1, "n2", "2-3", at(1));
  k.dropped(at(10));
  k.discount(seconds(30));
  EXPECT_FALSE(k.verdict(at(84)));
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

TEST(WatchFailure, SlurmsOwnSignalsAreRequestsNotFailures) {
  const auto signalled = [](int sig) { return sig; };  // a wait status for a death by SIG
  const auto exited = [](int code) { return code << 8; };
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) EXPECT_TRUE(w::ended_on_request(signalled(sig), false)) << sig;
  for (int sig : {SIGKILL, SIGSEGV, SIGABRT, SIGBUS}) EXPECT_FALSE(w::ended_on_request(signalled(sig), false)) << sig;
  EXPECT_FALSE(w::ended_on_request(exited(1), false));
  // After the step itself was signalled, a rank that caught it and exited non-zero is ending too.
  EXPECT_TRUE(w::ended_on_request(exited(1), true));
  EXPECT_TRUE(w::ended_on_request(signalled(SIGKILL), true));
}

TEST(WatchJudge, MembersReportTheirNodesFirstFailureAndCountTheRest) {
  w::Judge j(config(1000), at(0));
  for (unsigned n = 1; n < 1000; ++n) {
    w::Failure first = exit_of(n * 8, n, 10 + n * 1e-6);
    j.reported(n, first, {{"exit code 1", 8}}, at(10.1));
  }
  // A late repeat of an older report (fewer failures) changes nothing.
  j.reported(7, exit_of(56, 7, 9), {{"exit code 1", 1}}, at(10.2));
  const auto v = j.verdict(at(11.2));
  ASSERT_TRUE(v);
  EXPECT_EQ(v->first.rank, 8u);
  EXPECT_EQ(v->first.node, 1u);
  EXPECT_EQ(v->also.at("exit code 1"), 999u * 8 - 1);
}

TEST(WatchJudge, AnAbortAfterAnotherFailureIsItsConsequence) {
  // Rank 1 raised; rank 0's library aborted 300 ms later on the broken collective.
  w::Judge j(config(2), at(0));
  w::Failure abort = exit_of(0, 0, 10.3);
  abort.how = w::How::Signal;
  abort.code = SIGABRT;
  j.failed(abort, at(10.35));
  j.failed(exit_of(1, 1, 10.0), at(10.4));
  auto v = j.verdict(at(11.4));
  ASSERT_TRUE(v);
  EXPECT_EQ(v->first.rank, 1u);
  EXPECT_EQ(v->also.at("SIGABRT"), 1u);
  // A SIGPIPE stamped a little before a peer's exception still gets no signal's preference.
  w::Judge k(config(2), at(0));
  w::Failure pipe = exit_of(0, 0, 10.0);
  pipe.how = w::How::Signal;
  pipe.code = SIGPIPE;
  k.failed(exit_of(1, 1, 9.9), at(10.1));
  k.failed(pipe, at(10.1));
  v = k.verdict(at(11.2));
  ASSERT_TRUE(v);
  EXPECT_EQ(v->first.rank, 1u);
  // An abort alone, or well after anything else, is the cause.
  w::Judge l(config(2), at(0));
  abort.at_ns = at(20).wall_ns;
  l.failed(exit_of(1, 1, 10.0), at(10.1));
  l.failed(abort, at(10.1));
  v = l.verdict(at(11.2));
  ASSERT_TRUE(v);
  EXPECT_EQ(v->first.rank, 1u);
}

// The judge keeps its nodes ordered by when each was last heard instead of scanning them all on
// every wake: against a plain scan of the same events (heard, done, the watch stopped), random
// ones, every answer is the same.
TEST(WatchJudge, ItsOrderOfSilencesAnswersAsAScanOfEveryNodeWould) {
  struct Plain {
    bool heard = false, done = false;
    w::Clock::time_point last{};
  };
  const w::Ms timeout = seconds(45);
  std::uint32_t seed = 12345;
  const auto next = [&seed](std::uint32_t below) {
    seed = seed * 1664525u + 1013904223u;
    return (seed >> 8) % below;
  };
  for (int trial = 0; trial < 20; ++trial) {
    const unsigned nodes = 2 + next(60);
    w::Judge j(config(nodes), at(0));
    std::vector<Plain> plain(nodes);
    double t = 0;
    w::Ms shifted{0};  // the gaps discounted so far, which move the head's clock on with them
    for (int step = 0; step < 400; ++step) {
      t += next(4000) / 1000.0;
      const unsigned node = 1 + next(nodes - 1);
      const auto now = [&] { return w::Now{at(t).mono + shifted, at(t).wall_ns}; };
      switch (next(10)) {
        case 0:
          j.done(node);
          plain[node].done = true;
          break;
        case 1: {
          const w::Ms gap{next(20000)};
          j.discount(gap);
          for (Plain& p : plain)
            if (p.heard) p.last += gap;
          shifted += gap;
          break;
        }
        default:
          j.heard(node, "n" + std::to_string(node), std::to_string(node), now());
          plain[node].heard = true;
          plain[node].last = now().mono;
      }
      unsigned heard = 1, silent = 0, longest = 0;
      bool all_done = true;
      for (unsigned i = 1; i < nodes; ++i) {
        const Plain& p = plain[i];
        heard += p.heard;
        if (!p.heard || p.done) continue;
        if (now().mono - p.last <= timeout) all_done = false;
        if (now().mono - p.last > timeout) ++silent;
        if (longest == 0 || p.last < plain[longest].last) longest = i;
      }
      const std::string where = "trial " + std::to_string(trial) + " step " + std::to_string(step);
      ASSERT_EQ(j.heard_count(), heard) << where;
      ASSERT_EQ(j.heard_all_done(now()), all_done) << where;
      ASSERT_EQ(j.next_check(now()),
                longest ? plain[longest].last + timeout + w::Ms(1) : w::Clock::time_point::max())
          << where;
      const auto v = j.verdict(now());
      ASSERT_EQ(static_cast<bool>(v), silent > 0) << where;
      if (v) {
        EXPECT_EQ(v->first.node, longest) << where;
        EXPECT_EQ(v->other_silent_nodes, silent - 1) << where;
        break;
      }
    }
  }
}
