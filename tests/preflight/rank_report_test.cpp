// Rank 0's one row per check over every rank's report, and the nodes' leaders.
#include "rank_report.hpp"

#include <gtest/gtest.h>

namespace {

namespace pf = ddp::preflight;
using pf::Status;

pf::RankReport report(int rank, int node, const std::string& host, const std::string& gpu,
                      std::vector<pf::Check> checks) {
  return pf::RankReport{rank, node, host, gpu, std::move(checks)};
}

TEST(PreflightRankReport, OneRowPerCheckNamingTheFailingRanks) {
  const std::vector<pf::RankReport> reports{
      report(0, 0, "n1", "", {{"interfaces", Status::Ok, "eth0"}, {"hcas", Status::Skipped, "none chosen"}}),
      report(1, 1, "n2", "", {{"interfaces", Status::Failed, "GLOO_SOCKET_IFNAME=eth1: no interface eth1 on this node"},
                              {"hcas", Status::Skipped, "none chosen"}})};
  const auto rows = pf::summarise(reports);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].status, Status::Failed);
  EXPECT_EQ(rows[0].detail, "GLOO_SOCKET_IFNAME=eth1: no interface eth1 on this node (n2 rank 1)");
  EXPECT_EQ(rows[1].status, Status::Skipped);
  EXPECT_EQ(rows[1].detail, "none chosen");
}

TEST(PreflightRankReport, TheSameFailureOnManyRanksIsSaidOnce) {
  std::vector<pf::RankReport> reports;
  for (int r = 0; r < 6; ++r)
    reports.push_back(report(r, r, "n" + std::to_string(r + 1), "",
                             {{"interfaces", Status::Failed, "GLOO_SOCKET_IFNAME=eth9: no interface eth9 on this node"}}));
  const auto rows = pf::summarise(reports);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].detail, "GLOO_SOCKET_IFNAME=eth9: no interface eth9 on this node (n1 rank 0, "
                            "n2 rank 1, n3 rank 2, n4 rank 3, and 2 more)");
}

TEST(PreflightRankReport, TwoRanksOnOneGpuFail) {
  const std::vector<pf::RankReport> reports{
      report(0, 0, "n1", "0000:3b:00.0", {{"gpus", Status::Ok, "cuda:0 0000:3b:00.0"}}),
      report(1, 0, "n1", "0000:3b:00.0", {{"gpus", Status::Ok, "cuda:1 0000:3b:00.0"}}),
      report(2, 1, "n2", "0000:3b:00.0", {{"gpus", Status::Ok, "cuda:0 0000:3b:00.0"}})};
  const auto rows = pf::summarise(reports);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].status, Status::Failed);
  EXPECT_NE(rows[0].detail.find("ranks 0, 1 on n1 all drive GPU 0000:3b:00.0"), std::string::npos)
      << rows[0].detail;
}

TEST(PreflightRankReport, EachNodeIsLedByItsLowestRank) {
  const std::vector<pf::RankReport> reports{report(3, 1, "n2", "", {}), report(0, 0, "n1", "", {}),
                                            report(2, 1, "n2", "", {}), report(1, 0, "n1", "", {})};
  const auto leaders = pf::node_leaders(reports);
  ASSERT_EQ(leaders.size(), 2u);
  EXPECT_EQ(leaders[0].host, "n1");
  EXPECT_EQ(leaders[0].rank, 0);
  EXPECT_EQ(leaders[1].host, "n2");
  EXPECT_EQ(leaders[1].rank, 2);
}

// A node with a failed check is left out, and every such node is named in one run; when every node
// failed, the fix is not to leave nodes out.
TEST(PreflightRankReport, NodesWithAFailedCheckAreNamedUnlessAllFailed) {
  const auto report = [](int rank, const std::string& host, Status s) {
    return pf::RankReport{rank, rank / 2, host, "", {{"hcas", s, s == Status::Failed ? "mlx5_0:1 DOWN" : "ok"}}};
  };
  std::vector<pf::RankReport> reports;
  for (int r = 0; r < 8; ++r)
    reports.push_back(report(r, "n" + std::to_string(r / 2), r == 3 || r == 6 ? Status::Failed : Status::Ok));
  EXPECT_EQ(pf::nodes_that_failed(reports), (std::vector<std::string>{"n1", "n3"}));
  for (auto& r : reports) r.checks[0].status = Status::Failed;
  EXPECT_TRUE(pf::nodes_that_failed(reports).empty());
}

}  // namespace
