// Rank 0's judgement in libddp's heartbeat (runtime/src/beat_hub.hpp), on a clock the test turns:
// who is silent, what a census finds, and what the verdict says, with nothing of the network.
#include "beat_hub.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace ddp::detail {
namespace {

using Clock = BeatHub::Clock;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr std::uint64_t kToken = 42;

struct Hub {
  explicit Hub(int world, milliseconds peer_timeout = seconds(10))
      : world(world), hub(world, milliseconds(1000), peer_timeout, t) {}
  // Every rank in `ranks` beats now, answering the census rank 0 last said.
  void beat(const std::vector<int>& ranks, RankState state = RankState::Running, std::uint64_t wants = 0) {
    for (const int r : ranks) {
      Beat b;
      b.token = kToken;
      b.rank = static_cast<std::uint32_t>(r);
      b.world = static_cast<std::uint32_t>(world);
      b.state = state;
      b.census = hub.answer_for(static_cast<std::uint32_t>(r), kToken).census;
      b.wants = wants;
      b.host = "n" + std::to_string(r / 4);
      hub.heard(b, t);
    }
  }
  std::vector<int> all_but(std::vector<int> out) const {
    std::vector<int> in;
    for (int r = 0; r < world; ++r)
      if (std::find(out.begin(), out.end(), r) == out.end()) in.push_back(r);
    return in;
  }
  // Time passes in quarter intervals; `beating` ranks beat once an interval, as the watch does.
  void pass(milliseconds d, const std::vector<int>& beating) {
    for (milliseconds done{0}; done < d; done += milliseconds(250)) {
      t += milliseconds(250);
      if (done.count() % 1000 == 0) beat(beating);
      hub.look(t);
    }
  }
  int world;
  Clock::time_point t = Clock::time_point(seconds(1000));
  BeatHub hub;
};

TEST(BeatHub, EveryRankBeatingIsNoLoss) {
  Hub h(8);
  h.beat(h.all_but({}));
  h.pass(seconds(60), h.all_but({}));
  EXPECT_FALSE(h.hub.verdict());
}

TEST(BeatHub, ARankSilentForThePeerTimeOutIsNamedWithItsNode) {
  Hub h(8);
  h.beat(h.all_but({}));
  h.pass(seconds(9), h.all_but({6}));
  EXPECT_FALSE(h.hub.verdict()) << "not before the peer time-out";
  h.pass(seconds(3), h.all_but({6}));
  ASSERT_TRUE(h.hub.verdict());
  EXPECT_EQ(*h.hub.verdict(),
            "rank 6 of 8 (on n1) stopped responding: no heartbeat for 10 s (DDP_PEER_TIMEOUT); it hangs, was "
            "stopped, or its node or network failed");
  EXPECT_EQ(h.hub.answer_for(3, kToken).verdict, *h.hub.verdict()) << "every answer carries it";
}

TEST(BeatHub, ANodeLostNamesAllItsRanks) {
  Hub h(8);
  h.beat(h.all_but({}));
  h.pass(seconds(1), h.all_but({}));
  h.pass(seconds(12), h.all_but({4, 5, 6, 7}));
  ASSERT_TRUE(h.hub.verdict());
  EXPECT_NE(h.hub.verdict()->find("rank 4 of 8 (on n1), rank 5 of 8 (on n1), rank 6 of 8 (on n1) and rank 7 of 8 (on n1) stopped responding"),
            std::string::npos)
      << *h.hub.verdict();
}

TEST(BeatHub, ARankNeverHeardIsNeverJudgedButListed) {
  Hub h(8);
  h.beat(h.all_but({3}));
  h.pass(seconds(30), h.all_but({3}));
  EXPECT_FALSE(h.hub.verdict()) << "its datagrams may be filtered: only its collectives speak for it";
  EXPECT_EQ(h.hub.never_heard(h.t, seconds(20)), std::vector<int>{3});
  EXPECT_TRUE(h.hub.never_heard(h.t, seconds(60)).empty()) << "not before the time allowed";
}

TEST(BeatHub, ACensusNamesTheKilledRankAndNotTheVictims) {
  Hub h(8);
  h.beat(h.all_but({}));
  // Rank 2 dies; the others' collectives fail and they ask, noting themselves failed.
  h.beat({0, 1, 3}, RankState::Failed, 1);
  h.hub.look(h.t);
  EXPECT_TRUE(h.hub.answer_for(1, kToken).census_open);
  EXPECT_EQ(h.hub.answer_for(1, kToken).census, 1u);
  h.pass(milliseconds(2000), h.all_but({2}));
  EXPECT_FALSE(h.hub.verdict()) << "2.5 intervals for every rank to answer";
  h.pass(milliseconds(1000), h.all_but({2}));
  ASSERT_TRUE(h.hub.verdict());
  EXPECT_EQ(*h.hub.verdict(), "rank 2 of 8 (on n0) stopped responding: it was killed, crashed, or its node or network failed");
}

TEST(BeatHub, ACensusWaitsWhileLateAnswersStillCome) {
  Hub h(8);
  h.beat(h.all_but({}));
  h.beat({0, 1}, RankState::Failed, 1);
  h.hub.look(h.t);
  // Ranks 2-5 answer at once; 6 answers late, 2.4 intervals in (a loaded rank 0 reads it late).
  h.beat({0, 1, 2, 3, 4, 5});
  h.t += milliseconds(2400);
  h.beat({6});
  h.hub.look(h.t);
  h.t += milliseconds(600);  // 3 intervals in, but an answer came 0.6 intervals ago
  h.hub.look(h.t);
  EXPECT_FALSE(h.hub.verdict());
  EXPECT_EQ(h.hub.answer_for(6, kToken).counted, 1u);
  h.t += milliseconds(500);
  h.hub.look(h.t);
  ASSERT_TRUE(h.hub.verdict());
  EXPECT_EQ(*h.hub.verdict(), "rank 7 of 8 (on n1) stopped responding: it was killed, crashed, or its node or network failed");
}

TEST(BeatHub, ACensusEveryRankAnswersClearsAndEndsAtOnce) {
  Hub h(8);
  h.beat(h.all_but({}));
  h.beat({1}, RankState::Failed, 1);
  h.hub.look(h.t);
  h.beat(h.all_but({}));  // every rank answers census 1
  h.hub.look(h.t);
  EXPECT_FALSE(h.hub.verdict());
  EXPECT_EQ(h.hub.answer_for(1, kToken).clear, 1u);
  EXPECT_FALSE(h.hub.answer_for(1, kToken).census_open);
}

TEST(BeatHub, ARankThatSaidItLeavesIsTheCauseEvenIfItStillAnswers) {
  Hub h(8);
  h.beat(h.all_but({}));
  h.beat({5}, RankState::Left);
  h.beat({0}, RankState::Failed, 1);
  h.hub.look(h.t);
  h.beat(h.all_but({}));
  h.hub.look(h.t);
  ASSERT_TRUE(h.hub.verdict());
  EXPECT_EQ(*h.hub.verdict(), "rank 5 of 8 (on n1) ended before the others; its own output says why");
}

TEST(BeatHub, AFinishedRankIsNeitherSilentNorAbsent) {
  Hub h(8);
  h.beat(h.all_but({}));
  h.beat({7}, RankState::Done);
  h.pass(seconds(20), h.all_but({7}));
  EXPECT_FALSE(h.hub.verdict());
  h.beat({1}, RankState::Failed, 1);
  h.hub.look(h.t);
  h.beat(h.all_but({7}));
  h.hub.look(h.t);
  EXPECT_FALSE(h.hub.verdict());
  EXPECT_EQ(h.hub.answer_for(7, kToken).recorded, RankState::Done);
  EXPECT_EQ(h.hub.running(), 7);
}

TEST(BeatHub, ARankAskingDuringACensusGetsANewOne) {
  Hub h(8);
  h.beat(h.all_but({}));
  h.beat({1}, RankState::Failed, 1);
  h.hub.look(h.t);  // census 1 open
  h.beat({3}, RankState::Failed, 2);  // rank 3 saw census 1 begin before it asked
  h.beat(h.all_but({}));
  h.hub.look(h.t);  // census 1 clear: everyone answered
  EXPECT_EQ(h.hub.answer_for(3, kToken).clear, 1u);
  EXPECT_EQ(h.hub.answer_for(3, kToken).census, 2u) << "census 2 began for rank 3";
  EXPECT_TRUE(h.hub.answer_for(3, kToken).census_open);
}

// Rank 0's watch away for a minute (the job suspended and resumed, rank 0 stopped or starved): its
// socket dropped the beats that came meanwhile, and nobody was silent but rank 0 itself.
TEST(BeatHub, TimeRank0DidNotRunIsNobodysSilence) {
  Hub h(8);
  h.beat(h.all_but({}));
  h.pass(seconds(2), h.all_but({}));
  // Its loop wakes 60 s late: the gap (gap.hpp) is what lies beyond its longest sleep.
  h.t += seconds(60);
  h.hub.discount(seconds(60) - milliseconds(250));
  h.hub.look(h.t);
  EXPECT_FALSE(h.hub.verdict()) << *h.hub.verdict();
  h.pass(seconds(30), h.all_but({}));
  EXPECT_FALSE(h.hub.verdict());
  // A rank still silent after it is found a peer time-out later, as ever.
  h.pass(seconds(9), h.all_but({5}));
  EXPECT_FALSE(h.hub.verdict());
  h.pass(seconds(3), h.all_but({5}));
  ASSERT_TRUE(h.hub.verdict());
  EXPECT_EQ(h.hub.verdict()->rfind("rank 5 of 8 (on n1) stopped responding", 0), 0u) << *h.hub.verdict();
}

TEST(BeatHub, ACensusOpenWhileRank0DidNotRunWaitsForTheAnswersAfterIt) {
  Hub h(8);
  h.beat(h.all_but({}));
  h.beat({1}, RankState::Failed, 1);
  h.hub.look(h.t);  // census 1 open; rank 0 stops before anyone answers
  h.t += seconds(30);
  h.hub.discount(seconds(30) - milliseconds(250));
  h.hub.look(h.t);
  EXPECT_FALSE(h.hub.verdict()) << "nobody could answer while rank 0 was away: " << *h.hub.verdict();
  h.beat(h.all_but({}));
  h.hub.look(h.t);
  EXPECT_FALSE(h.hub.verdict());
  EXPECT_EQ(h.hub.answer_for(1, kToken).clear, 1u);
}

TEST(BeatHub, TheFirstVerdictStands) {
  Hub h(8, seconds(5));
  h.beat(h.all_but({}));
  h.pass(seconds(7), h.all_but({2}));
  ASSERT_TRUE(h.hub.verdict());
  const std::string first = *h.hub.verdict();
  h.pass(seconds(7), h.all_but({2, 3}));
  EXPECT_EQ(*h.hub.verdict(), first);
}

TEST(BeatHub, AThousandRanksLostAreNamedInFewWordsThatFitOneDatagram) {
  Hub h(8192);
  h.beat(h.all_but({}));
  std::vector<int> alive;
  for (int r = 0; r < 8192; ++r)
    if (r < 1000 || r >= 2000) alive.push_back(r);
  h.pass(seconds(12), alive);
  ASSERT_TRUE(h.hub.verdict());
  const std::string& v = *h.hub.verdict();
  EXPECT_NE(v.find("rank 1000 of 8192 (on n250)"), std::string::npos) << v;
  EXPECT_NE(v.find(" and 992 more ranks stopped responding"), std::string::npos) << v;
  EXPECT_LT(v.size(), 2048u);
  const auto answer = encode(h.hub.answer_for(1, kToken));
  EXPECT_LE(answer.size(), kMaxHeartbeatDatagram);
  EXPECT_EQ(decode_answer(answer, kToken, 8192, 1)->verdict, v) << "whole, not cut";
}

}  // namespace
}  // namespace ddp::detail
