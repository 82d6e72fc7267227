// DistributedSampler: PyTorch's index order and partition, checked against lists printed by
// Debian's python3-torch 1.13:
//   torch.randperm(n, generator=torch.Generator().manual_seed(s)).tolist()
//   list(torch.utils.data.DistributedSampler(range(n), R, r, shuffle, seed, drop_last))
#include "ddp/sampler.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <set>
#include <vector>

#include "ddp/error.hpp"

using ddp::DistributedSampler;
using Indices = std::vector<std::int64_t>;

namespace {

// All ranks' indices of one epoch, in the order they were dealt: position i of rank r is
// element i * replicas + r of the padded (or cut) permutation.
Indices dealt(std::int64_t size, int replicas, bool shuffle, std::uint64_t seed, bool drop_last,
              std::int64_t epoch) {
  std::vector<Indices> per_rank;
  for (int r = 0; r < replicas; ++r) {
    DistributedSampler s(size, replicas, r, shuffle, seed, drop_last);
    s.set_epoch(epoch);
    per_rank.push_back(s.indices());
    EXPECT_EQ(static_cast<std::int64_t>(per_rank.back().size()), s.num_samples());
  }
  Indices all;
  for (std::size_t i = 0; i < per_rank[0].size(); ++i)
    for (int r = 0; r < replicas; ++r) all.push_back(per_rank[static_cast<std::size_t>(r)][i]);
  return all;
}

Indices randperm_via_sampler(std::int64_t n, std::uint64_t seed) {
  return DistributedSampler(n, 1, 0, true, seed).indices();
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ddp::Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no ddp::Error";
  return "";
}

}  // namespace

TEST(SamplerReference, ShuffleIsPyTorchsRandperm) {
  EXPECT_EQ(randperm_via_sampler(10, 0), (Indices{4, 1, 7, 5, 3, 9, 0, 8, 6, 2}));
  EXPECT_EQ(randperm_via_sampler(10, 1), (Indices{5, 6, 1, 2, 0, 8, 9, 3, 7, 4}));
  EXPECT_EQ(randperm_via_sampler(17, 42),
            (Indices{13, 4, 3, 15, 8, 16, 9, 11, 12, 10, 6, 2, 1, 7, 14, 0, 5}));
  EXPECT_EQ(randperm_via_sampler(5, 7), (Indices{0, 1, 3, 2, 4}));
  EXPECT_EQ(randperm_via_sampler(1, 3), (Indices{0}));
  EXPECT_EQ(randperm_via_sampler(32, 12345),
            (Indices{2,  22, 17, 19, 12, 30, 14, 15, 29, 8,  27, 10, 18, 20, 31, 6,
                     25, 9,  21, 11, 24, 1,  23, 7,  0,  26, 13, 4,  5,  16, 3,  28}));
}

TEST(SamplerReference, EpochIsAddedToTheSeed) {
  DistributedSampler s(10, 1, 0, true, 0);
  s.set_epoch(1);
  EXPECT_EQ(s.indices(), randperm_via_sampler(10, 1));
}

TEST(SamplerReference, MatchesPyTorchsDistributedSampler) {
  // DistributedSampler(range(10), num_replicas=4, rank=r, shuffle=True, seed=5), epoch 3.
  const std::vector<Indices> padded = {{3, 2, 8}, {5, 6, 9}, {0, 4, 3}, {1, 7, 5}};
  // DistributedSampler(range(7), num_replicas=3, rank=r, seed=1, drop_last=True), epoch 2.
  const std::vector<Indices> cut = {{5, 6}, {3, 0}, {4, 2}};
  // DistributedSampler(range(2), num_replicas=5, rank=r, shuffle=False).
  const std::vector<Indices> wrapped = {{0}, {1}, {0}, {1}, {0}};
  for (int r = 0; r < 4; ++r) {
    DistributedSampler s(10, 4, r, true, 5);
    s.set_epoch(3);
    EXPECT_EQ(s.indices(), padded[static_cast<std::size_t>(r)]) << "rank " << r;
  }
  for (int r = 0; r < 3; ++r) {
    DistributedSampler s(7, 3, r, true, 1, true);
    s.set_epoch(2);
    EXPECT_EQ(s.indices(), cut[static_cast<std::size_t>(r)]) << "rank " << r;
  }
  for (int r = 0; r < 5; ++r)
    EXPECT_EQ(DistributedSampler(2, 5, r, false).indices(), wrapped[static_cast<std::size_t>(r)]);
}

TEST(Sampler, EveryIndexExactlyOncePerEpochWhenTheSizeDivides) {
  for (std::int64_t epoch : {0, 1, 7}) {
    Indices all = dealt(96, 8, true, 1234, false, epoch);
    ASSERT_EQ(all.size(), 96u);
    std::sort(all.begin(), all.end());
    Indices expected(96);
    std::iota(expected.begin(), expected.end(), 0);
    EXPECT_EQ(all, expected) << "epoch " << epoch;
  }
  DistributedSampler s(96, 8, 3);
  EXPECT_EQ(s.num_samples(), 12);
  EXPECT_EQ(s.total_size(), 96);
  EXPECT_EQ(DistributedSampler(96, 8, 3, true, 0, true).num_samples(), 12);
}

TEST(Sampler, PaddingRepeatsTheFirstIndices) {
  DistributedSampler s(10, 4, 0);
  EXPECT_EQ(s.num_samples(), 3);
  EXPECT_EQ(s.total_size(), 12);
  const Indices all = dealt(10, 4, true, 9, false, 2);
  ASSERT_EQ(all.size(), 12u);
  EXPECT_EQ(all[10], all[0]);
  EXPECT_EQ(all[11], all[1]);
  EXPECT_EQ(std::set<std::int64_t>(all.begin(), all.end()).size(), 10u);
}

TEST(Sampler, PaddingWrapsAsOftenAsNeeded) {
  // 3 samples over 8 ranks: 0 1 2 0 1 2 0 1.
  EXPECT_EQ(dealt(3, 8, false, 0, false, 0), (Indices{0, 1, 2, 0, 1, 2, 0, 1}));
  EXPECT_EQ(DistributedSampler(3, 8, 7, false).num_samples(), 1);
}

TEST(Sampler, DropLastCutsTheRemainder) {
  DistributedSampler s(10, 4, 0, true, 0, true);
  EXPECT_EQ(s.num_samples(), 2);
  EXPECT_EQ(s.total_size(), 8);
  const Indices all = dealt(10, 4, true, 0, true, 0);
  EXPECT_EQ(std::set<std::int64_t>(all.begin(), all.end()).size(), 8u);
  // Fewer samples than ranks: nothing to read.
  EXPECT_EQ(DistributedSampler(3, 4, 1, true, 0, true).num_samples(), 0);
  EXPECT_TRUE(DistributedSampler(3, 4, 1, true, 0, true).indices().empty());
}

TEST(Sampler, NoShuffleDealsInOrder) {
  EXPECT_EQ(DistributedSampler(8, 2, 1, false).indices(), (Indices{1, 3, 5, 7}));
}

TEST(Sampler, DifferentEpochsDiffer) {
  DistributedSampler s(100, 4, 2, true, 17);
  const Indices first = s.indices();
  s.set_epoch(1);
  EXPECT_NE(s.indices(), first);
  EXPECT_EQ(s.epoch(), 1);
  s.set_epoch(0);
  EXPECT_EQ(s.indices(), first);
}

TEST(Sampler, SameSeedAndEpochSameOrderOnEveryRank) {
  // Each rank computes the permutation alone; they agree, so together they cover it.
  const Indices a = dealt(50, 5, true, 3, false, 4);
  const Indices b = dealt(50, 5, true, 3, false, 4);
  EXPECT_EQ(a, b);
  DistributedSampler one(50, 1, 0, true, 3);
  one.set_epoch(4);
  EXPECT_EQ(a, one.indices());
  EXPECT_NE(dealt(50, 5, true, 4, false, 4), a);  // another seed, another order
}

TEST(Sampler, EmptyDatasetHasNoIndices) {
  DistributedSampler s(0, 4, 1);
  EXPECT_EQ(s.num_samples(), 0);
  EXPECT_TRUE(s.indices().empty());
}

TEST(Sampler, InvalidArgumentsNameTheArgument) {
  EXPECT_NE(error_of([] { DistributedSampler(-1, 2, 0); }).find("dataset_size=-1"),
            std::string::npos);
  EXPECT_NE(error_of([] { DistributedSampler(10, 0, 0); }).find("num_replicas=0"),
            std::string::npos);
  EXPECT_NE(error_of([] { DistributedSampler(10, 4, 4); }).find("rank=4 is outside 0..3"),
            std::string::npos);
  EXPECT_NE(error_of([] { DistributedSampler(10, 4, -1); }).find("rank=-1"), std::string::npos);
  DistributedSampler s(10, 4, 0);
  EXPECT_NE(error_of([&] { s.set_epoch(-1); }).find("epoch=-1"), std::string::npos);
}
