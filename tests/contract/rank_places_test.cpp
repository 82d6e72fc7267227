#include "rank_places.hpp"

#include <gtest/gtest.h>

namespace ddp::plan {
namespace {

std::vector<RankPlace> block(unsigned first, unsigned last, unsigned per_node, const std::string& prefix,
                             int width = 0) {
  std::vector<RankPlace> out;
  for (unsigned r = first; r <= last; ++r) {
    std::string n = std::to_string(r / per_node);
    while (static_cast<int>(n.size()) < width) n = "0" + n;
    out.push_back({r, prefix + n});
  }
  return out;
}

TEST(RanksByNode, OneRankOnOneNode) {
  EXPECT_EQ(ranks_by_node({{2, "n1"}}, 1), "n1: rank 2");
}

TEST(RanksByNode, ConsecutiveRanksOnConsecutiveNodesAreOneEntry) {
  EXPECT_EQ(ranks_by_node(block(136, 159, 8, "n"), 24), "n[17-19]: ranks 136-159");
  EXPECT_EQ(ranks_by_node(block(70, 81, 8, "gpu", 3), 12), "gpu[008-010]: ranks 70-81");
}

TEST(RanksByNode, GapsAndOtherNodesStartNewEntriesInRankOrder) {
  EXPECT_EQ(ranks_by_node({{170, "n21"}, {137, "n17"}, {136, "n17"}, {140, "n17"}}, 4),
            "n17: ranks 136-137; n17: rank 140; n21: rank 170");
  // Consecutive ranks on nodes whose names do not follow each other.
  EXPECT_EQ(ranks_by_node({{3, "a1"}, {4, "b2"}}, 2), "a1: rank 3; b2: rank 4");
  EXPECT_EQ(ranks_by_node({{3, "n09"}, {4, "n010"}}, 2), "n09: rank 3; n010: rank 4");
  EXPECT_EQ(ranks_by_node({{3, "n9"}, {4, "n10"}}, 2), "n[9-10]: ranks 3-4");
  EXPECT_EQ(ranks_by_node({{3, "login"}, {4, "login"}}, 2), "login: ranks 3-4");
}

TEST(RanksByNode, TheRestAreCounted) {
  EXPECT_EQ(ranks_by_node({{5, "n0"}, {9, "n1"}}, 8190), "n0: rank 5; n1: rank 9; and 8188 more");
  EXPECT_EQ(ranks_by_node({{5, "n0"}, {5, "n0"}}, 1), "n0: rank 5");
}

TEST(RanksByNode, EightNamedRanksStayShortWhateverTheWorld) {
  std::vector<RankPlace> named;
  for (unsigned r = 0; r < kMaxNamedRanks; ++r)
    named.push_back({r * 1000, "node-with-a-long-name-" + std::to_string(r)});
  EXPECT_LT(ranks_by_node(named, 1000000).size(), 400u);
}

}  // namespace
}  // namespace ddp::plan
