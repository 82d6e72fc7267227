// Rank 0's orders after the checks: every rank hears the same number of rounds, only the node
// leaders get jobs, each job reaches both its ranks, and the orders survive the trip as JSON.
#include "orders.hpp"

#include <gtest/gtest.h>

#include "../common/error_of.hpp"
#include "ddp/error.hpp"
#include "messages.hpp"

namespace {

namespace pf = ddp::preflight;

// 3 nodes of 4 ranks: leaders 0, 4, 8.
const std::vector<pf::NodeLeader> kNodes{{"n1", 0}, {"n2", 4}, {"n3", 8}};

TEST(PreflightOrders, OnlyLeadersMeasureAndEveryRankCountsTheRounds) {
  const auto rounds = pf::pair_rounds(3, pf::PairMode::All);
  const auto orders = pf::orders_for_ranks(kNodes, rounds, 12, true);
  ASSERT_EQ(orders.size(), 12u);
  std::size_t jobs = 0;
  for (std::size_t r = 0; r < orders.size(); ++r) {
    EXPECT_TRUE(orders[r].measure);
    EXPECT_EQ(orders[r].rounds, static_cast<int>(rounds.size()));
    if (r % 4 != 0) {
      EXPECT_TRUE(orders[r].jobs.empty()) << "rank " << r;
    }
    jobs += orders[r].jobs.size();
  }
  EXPECT_EQ(jobs, 2u * 3u);  // 3 pairs, each on both of its ranks
  for (const pf::PairJob& j : orders[4].jobs) {
    EXPECT_TRUE(j.rank_a == 4 || j.rank_b == 4);
    EXPECT_EQ(j.rank_a == 0 ? "n1" : "n2", j.host_a);
  }
}

TEST(PreflightOrders, AFailedCheckStopsEveryRank) {
  for (const auto& o : pf::orders_for_ranks(kNodes, {}, 12, false)) {
    EXPECT_FALSE(o.measure);
    EXPECT_EQ(o.rounds, 0);
    EXPECT_TRUE(o.jobs.empty());
  }
}

TEST(PreflightOrders, RoundTripAsJsonAndBadOnesNameRankZero) {
  const auto orders = pf::orders_for_ranks(kNodes, pf::pair_rounds(3, pf::PairMode::Ring), 12, true);
  const auto back = pf::decode_orders(pf::encode_orders(orders[8]));
  EXPECT_EQ(back.rounds, orders[8].rounds);
  ASSERT_EQ(back.jobs.size(), orders[8].jobs.size());
  EXPECT_EQ(back.jobs[0].host_b, orders[8].jobs[0].host_b);
  EXPECT_EQ(back.jobs[0].rank_a, orders[8].jobs[0].rank_a);
  const auto error = ddp::test::error_of<ddp::Error>(
      [] { pf::decode_orders(R"({"measure":true,"rounds":1,"jobs":[[3,0,4,"n1","n2"]]})"); });
  EXPECT_NE(error.find("the orders of rank 0 cannot be read (a pair job in round 3 of 1)"), std::string::npos)
      << error;
}

}  // namespace
