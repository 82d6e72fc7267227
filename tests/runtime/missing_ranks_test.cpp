// How rank 0's messages count the absent ranks they do not name: the search and the counts are
// separate requests, and a rank that comes between them must not be counted as absent.
#include "missing_ranks.hpp"

#include <gtest/gtest.h>
#include <torch/csrc/distributed/c10d/HashStore.hpp>

#include <cstdint>
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

void arrive(c10d::Store& store, int first, int end) {
  for (int r = first; r < end; ++r) store.set(ddp::detail::arrival_key(r), std::vector<std::uint8_t>{'1'});
}

TEST(NameAbsent, ARankThatCameAfterTheCountIsNotCountedMore) {
  auto store = c10::make_intrusive<c10d::HashStore>();
  arrive(*store, 0, 5);
  arrive(*store, 6, 16);
  // The count (14) was read before rank 9 arrived; only rank 5 is absent now.
  const auto named = ddp::detail::name_absent(*store, rank0_of(16), ddp::detail::arrival_key, 14);
  EXPECT_EQ(named.list, "5");
  EXPECT_EQ(named.places, "NODE_RANK 0: rank 5");
}

TEST(NameAbsent, ARackLostNamesEightAndCountsTheRest) {
  auto store = c10::make_intrusive<c10d::HashStore>();
  arrive(*store, 0, 16);
  arrive(*store, 40, 64);
  const auto named = ddp::detail::name_absent(*store, rank0_of(64), ddp::detail::arrival_key, 40);
  EXPECT_EQ(named.list, "16-23 and 16 more");
}

}  // namespace
