// Rank 0's comparison of the contracts the ranks bring to the rendezvous.
#include "contract_views.hpp"

#include <gtest/gtest.h>

namespace {

using ddp::detail::RankView;

RankView view(int rank, int world, int local, int local_world, int node, const std::string& host,
              const std::string& master = "n1:24567") {
  return RankView{rank, world, local, local_world, node, master, host};
}

std::vector<RankView> two_by_two() {
  return {view(0, 4, 0, 2, 0, "n1"), view(1, 4, 1, 2, 0, "n1"), view(2, 4, 0, 2, 1, "n2"),
          view(3, 4, 1, 2, 1, "n2")};
}

std::string problem(const std::vector<RankView>& views) {
  return ddp::detail::contract_disagreement(views).value_or("");
}

TEST(ContractViews, RoundTripThroughTheStoreText) {
  const RankView v = view(3, 4, 1, 2, 1, "n2", "10.0.0.1:29500");
  const std::string text = ddp::detail::encode_view(v);
  EXPECT_EQ(text, "rank=3 world=4 local=1/2 node=1 master=10.0.0.1:29500 host=n2");
  const auto back = ddp::detail::decode_view(text);
  ASSERT_TRUE(back);
  EXPECT_EQ(ddp::detail::encode_view(*back), text);
  EXPECT_FALSE(ddp::detail::decode_view("rank=3 world=4"));
  EXPECT_FALSE(ddp::detail::decode_view("rank=x world=4 local=1/2 node=1 master=a:1 host=n"));
  EXPECT_FALSE(ddp::detail::decode_view("garbage"));
}

TEST(ContractViews, OneStepAgrees) {
  EXPECT_EQ(problem(two_by_two()), "");
  // Order does not matter, and two nodes may share a host name's machine (NODE_RANK tells).
  auto views = two_by_two();
  std::swap(views[0], views[3]);
  EXPECT_EQ(problem(views), "");
}

TEST(ContractViews, ADifferentWorldSizeOrMasterIsNamed) {
  auto views = two_by_two();
  views[2].world_size = 3;
  EXPECT_NE(problem(views).find("rank 2 (on n2) has WORLD_SIZE=3, rank 0 (on n1) has 4"),
            std::string::npos) << problem(views);
  views = two_by_two();
  views[3].master = "n2:24567";
  EXPECT_NE(problem(views).find("rank 3 (on n2) has MASTER_ADDR:MASTER_PORT='n2:24567', rank 0 (on n1) has 'n1:24567'"),
            std::string::npos) << problem(views);
  EXPECT_NE(problem(views).find("srun --ddp sets them all"), std::string::npos);
}

TEST(ContractViews, DuplicateAndMissingRanksAreNamed) {
  auto views = two_by_two();
  views[3].rank = 2;
  const std::string p = problem(views);
  EXPECT_NE(p.find("RANK=2 is claimed by 2 tasks (on n2)"), std::string::npos) << p;
  EXPECT_NE(p.find("no task has RANK=3"), std::string::npos) << p;
}

TEST(ContractViews, LocalRanksMustAddUpPerNode) {
  auto views = two_by_two();
  views[3].local_rank = 0;
  EXPECT_NE(problem(views).find("node n2 (NODE_RANK=1) runs 2 ranks with LOCAL_RANK 0,0 but LOCAL_WORLD_SIZE=2"),
            std::string::npos) << problem(views);
  views = two_by_two();
  views[1].local_world_size = 4;
  EXPECT_NE(problem(views).find("node n1 (NODE_RANK=0) has ranks with different LOCAL_WORLD_SIZE"),
            std::string::npos) << problem(views);
  views = two_by_two();
  views[2].node_rank = 0;
  views[3].node_rank = 0;
  EXPECT_NE(problem(views).find("nodes n1, n2 all have NODE_RANK=0"), std::string::npos)
      << problem(views);
}

}  // namespace
