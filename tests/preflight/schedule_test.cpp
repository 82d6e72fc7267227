// Node pairs in rounds: every pair once (or the ring), no node twice in a round.
#include "schedule.hpp"

#include <gtest/gtest.h>

#include <set>
#include <stdexcept>

namespace {

using ddp::preflight::PairMode;

void expect_disjoint_rounds(const std::vector<std::vector<ddp::preflight::Pair>>& rounds) {
  for (const auto& round : rounds) {
    std::set<int> busy;
    for (const auto& [a, b] : round) {
      EXPECT_LT(a, b);
      EXPECT_TRUE(busy.insert(a).second) << "node " << a << " twice in a round";
      EXPECT_TRUE(busy.insert(b).second) << "node " << b << " twice in a round";
    }
  }
}

TEST(PreflightSchedule, AllPairsOnceInTheFewestRounds) {
  for (int n = 2; n <= 9; ++n) {
    const auto rounds = ddp::preflight::pair_rounds(n, PairMode::All);
    EXPECT_EQ(static_cast<int>(rounds.size()), n % 2 ? n : n - 1) << n << " nodes";
    expect_disjoint_rounds(rounds);
    std::set<ddp::preflight::Pair> seen;
    for (const auto& round : rounds)
      for (const auto& p : round) EXPECT_TRUE(seen.insert(p).second) << p.first << "-" << p.second;
    EXPECT_EQ(static_cast<int>(seen.size()), n * (n - 1) / 2) << n << " nodes";
  }
}

TEST(PreflightSchedule, RingClosesInTwoOrThreeRounds) {
  const auto even = ddp::preflight::pair_rounds(6, PairMode::Ring);
  EXPECT_EQ(even.size(), 2u);
  const auto odd = ddp::preflight::pair_rounds(5, PairMode::Ring);
  EXPECT_EQ(odd.size(), 3u);
  for (const auto* rounds : {&even, &odd}) {
    expect_disjoint_rounds(*rounds);
    std::size_t links = 0;
    for (const auto& r : *rounds) links += r.size();
    EXPECT_EQ(links, rounds == &even ? 6u : 5u);
  }
  EXPECT_EQ(ddp::preflight::pair_rounds(2, PairMode::Ring).size(), 1u);
}

TEST(PreflightSchedule, NoPairsForOneNodeOrNone) {
  EXPECT_TRUE(ddp::preflight::pair_rounds(1, PairMode::All).empty());
  EXPECT_TRUE(ddp::preflight::pair_rounds(8, PairMode::None).empty());
}

TEST(PreflightSchedule, AutoIsAllUpToSixteenNodes) {
  EXPECT_EQ(ddp::preflight::pair_mode("auto", 16), PairMode::All);
  EXPECT_EQ(ddp::preflight::pair_mode("auto", 17), PairMode::Ring);
  EXPECT_EQ(ddp::preflight::pair_mode("ring", 3), PairMode::Ring);
  EXPECT_THROW(ddp::preflight::pair_mode("some", 3), std::invalid_argument);
}

}  // namespace
