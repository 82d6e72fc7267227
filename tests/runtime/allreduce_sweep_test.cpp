// The arithmetic of the all-reduce sweep: nccl-tests' bus bandwidth, the sizes, the iterations.
#include "ddp/allreduce_sweep.hpp"

#include <gtest/gtest.h>

#include "ddp/error.hpp"

namespace {

TEST(AllreduceBench, BusFactorIsNcclTests) {
  // nccl-tests doc/PERFORMANCE.md: busbw = algbw * 2(n-1)/n.
  EXPECT_DOUBLE_EQ(ddp::allreduce_bus_factor(1), 0.0);
  EXPECT_DOUBLE_EQ(ddp::allreduce_bus_factor(2), 1.0);
  EXPECT_DOUBLE_EQ(ddp::allreduce_bus_factor(4), 1.5);
  EXPECT_DOUBLE_EQ(ddp::allreduce_bus_factor(8), 1.75);
}

TEST(AllreduceBench, SampleGivesAlgorithmAndBusBandwidthInGBs) {
  // 64 MiB in 10 ms on 8 ranks: 6.71 GB/s algbw, 11.74 GB/s busbw.
  const auto s = ddp::allreduce_sample(64 << 20, 5, 0.010, 8);
  EXPECT_NEAR(s.algbw_gbps, 6.7108864, 1e-9);
  EXPECT_NEAR(s.busbw_gbps, 6.7108864 * 1.75, 1e-9);
  EXPECT_EQ(s.iterations, 5);
  EXPECT_EQ(ddp::allreduce_sample(8, 1, 0.0, 2).busbw_gbps, 0.0);
}

TEST(AllreduceBench, SizesRunFromSmallToTheLargestByTheFactor) {
  const std::vector<std::size_t> want{8, 64, 512, 4096, 32768, 262144, 2097152, 16777216, 67108864};
  EXPECT_EQ(ddp::allreduce_sweep_sizes(8, 64 << 20, 8), want);
  EXPECT_EQ(ddp::allreduce_sweep_sizes(8, 8, 2), std::vector<std::size_t>{8});
  // The largest size always comes last, whole float32 elements throughout.
  EXPECT_EQ(ddp::allreduce_sweep_sizes(6, 100, 4), (std::vector<std::size_t>{4, 24, 96, 100}));
  EXPECT_THROW(ddp::allreduce_sweep_sizes(2, 64, 2), ddp::Error);
  EXPECT_THROW(ddp::allreduce_sweep_sizes(8, 4, 2), ddp::Error);
  EXPECT_THROW(ddp::allreduce_sweep_sizes(8, 64, 1), ddp::Error);
}

TEST(AllreduceBench, IterationsFitTheirShare) {
  EXPECT_EQ(ddp::allreduce_iterations(0.01, 0.1, 0.1, 20), 10);
  EXPECT_EQ(ddp::allreduce_iterations(0.01, 1.0, 1.0, 20), 20);
  EXPECT_EQ(ddp::allreduce_iterations(1.0, 0.1, 0.1, 20), 1);  // at least one
  EXPECT_EQ(ddp::allreduce_iterations(0.0, 0.1, 0.1, 20), 20);
  EXPECT_EQ(ddp::allreduce_iterations(0.01, -1, -1, 20), 1);
  // A small size's share is tiny, but five of them cost next to nothing: five.
  EXPECT_EQ(ddp::allreduce_iterations(100e-6, 1e-6, 2.0, 20), 5);
  EXPECT_EQ(ddp::allreduce_iterations(0.1, 1e-6, 2.0, 20), 1);
}

TEST(AllreduceBench, LargerSizesLaterGetMoreOfTheBudget) {
  EXPECT_DOUBLE_EQ(ddp::allreduce_share(2.0, 0.0), 2.0);  // the last size: all that is left
  EXPECT_DOUBLE_EQ(ddp::allreduce_share(2.0, 4.0), 0.4);  // 16 MiB before 64 MiB: a fifth
  EXPECT_DOUBLE_EQ(ddp::allreduce_share(-1.0, 4.0), 0.0);
}

TEST(AllreduceBench, PeakAndLatencyOfASweep) {
  ddp::AllreduceSweep sweep;
  sweep.samples = {ddp::allreduce_sample(8, 10, 100e-6, 4), ddp::allreduce_sample(1 << 20, 5, 2e-3, 4),
                   ddp::allreduce_sample(4 << 20, 2, 7e-3, 4)};
  EXPECT_DOUBLE_EQ(sweep.latency_seconds(), 100e-6);
  EXPECT_EQ(sweep.peak().bytes, std::size_t{4} << 20);
  EXPECT_THROW(ddp::AllreduceSweep{}.peak(), ddp::Error);
}

}  // namespace
