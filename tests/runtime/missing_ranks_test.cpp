// How rank 0's messages count the absent ranks they do not name: the search and the counts are
// separate requests, and a rank that comes between them must not be counted as absent.
#include "missing_ranks.hpp"

#include <gtest/gtest.h>
#include <torch/csrc/distributed/c10d/HashStore.hpp>

#include <cstdint>
#include <utility>
#include <vector>

#include "rank_places.hpp"
#include "rendezvous.hpp"

namespace {

using ddp::detail::absent_not_named;
using ddp::plan::kMaxNamedRanks;

TEST(AbsentNotNamed, ASearchShortOfItsLimitSawEveryAbsentRank) {
  // 2 found; the counts, read before a third rank came, say 3 are absent.
  EXPECT_EQ(absent_not_named(2, kMaxNamedRanks, 100, 97), 0u);
  EXPECT_EQ(absent_not_named(0, kMaxNamedRanks, 100, 99), 0u);
}

TEST(AbsentNotNamed, AFullSearchCountsTheRestFromTheCounts) {
  EXPECT_EQ(absent_not_named(kMaxNamedRanks, kMaxNamedRanks, 8192, 8192 - 200), 192u);
  EXPECT_EQ(absent_not_named(kMaxNamedRanks, kMaxNamedRanks, 8192, 8192 - kMaxNamedRanks), 0u);
  // Late arrivals lower the count below what the search found: nobody more.
  EXPECT_EQ(absent_not_named(kMaxNamedRanks, kMaxNamedRanks, 8192, 8192 - 3), 0u);
  // A RANK claimed twice counts past the world.
  EXPECT_EQ(absent_not_named(kMaxNamedRanks, kMaxNamedRanks, 64, 65), 0u);
}

ddp::Context rank0_of(int world) {
  ddp::Context c;
  c.world_size = world;
  c.local_world_size = 8;
  c.nodes = world / 8;
  return c;
}

// What rank 0 says when the ranks in `arrived` ([first, end) ranges) left their keys and `counted`
// said they had, in a world of `world`.
ddp::detail::NamedRanks absent_of(int world, const std::vector<std::pair<int, int>>& arrived, std::int64_t counted) {
  auto store = c10::make_intrusive<c10d::HashStore>();
  for (const auto& [first, end] : arrived)
    for (int r = first; r < end; ++r) store->set(ddp::detail::arrival_key(r), std::vector<std::uint8_t>{'1'});
  return ddp::detail::name_absent(*store, rank0_of(world), ddp::detail::arrival_key, counted);
}

TEST(NameAbsent, ARankThatCameAfterTheCountIsNotCountedMore) {
  // The count (14) was read before rank 9 arrived; only rank 5 is absent now.
  const auto named = absent_of(16, {{0, 5}, {6, 16}}, 14);
  EXPECT_EQ(named.list, "5");
  EXPECT_EQ(named.places, "NODE_RANK 0: rank 5");
}

TEST(NameAbsent, ARackLostNamesEightAndCountsTheRest) {
  EXPECT_EQ(absent_of(64, {{0, 16}, {40, 64}}, 40).list, "16-23 and 16 more");
}

}  // namespace
