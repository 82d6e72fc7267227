// The step's series over time: the axis's bins, a node's values per bin (means over GPUs and
// ranks, sums over NICs, rates from counters), the cap on lines, and the spread over nodes.
#include <gtest/gtest.h>

#include <cmath>

#include "series.hpp"

using namespace ddp::monitor;

TEST(MonitorSeries, BinsAreNoFinerThanTheIntervalAndNoMoreThanTheCap) {
  const TimeAxis short_run = TimeAxis::over(100, 6.6, 1);
  EXPECT_EQ(short_run.bins, 7u);
  EXPECT_DOUBLE_EQ(short_run.bin_seconds, 1);
  const TimeAxis day = TimeAxis::over(100, 86400, 10);
  EXPECT_EQ(day.bins, kMaxBins);
  EXPECT_DOUBLE_EQ(day.bin_seconds, 180);
  EXPECT_EQ(day.bin_of(86400), kMaxBins - 1);  // the very end is in the last bin
  EXPECT_EQ(day.bin_of(-3), 0u);
  EXPECT_EQ(TimeAxis::over(100, 0, 10).bins, 1u);
}

TEST(MonitorSeries, ANodesValueIsTheMeanOverItsGpusAndTheSumOverItsNics) {
  const TimeAxis axis = TimeAxis::over(0, 4, 1);
  NodeSeriesBuilder b(axis, "n1", 0);
  for (double t : {1.0, 2.0, 3.0}) {
    b.add({t, GpuSample{0, 90, 2048, 300}});
    b.add({t, GpuSample{1, t == 3 ? 50.0 : 10.0, 1024, std::nullopt}});
    b.add({t, CpuSample{4, 100}});
    b.add({t, NetSample{"eth0", false, static_cast<std::uint64_t>(t * 1000), 0}});
    b.add({t, NetSample{"mlx5_0:1", true, static_cast<std::uint64_t>(t * 3000), 0}});
  }
  const auto r = b.finish({1});
  const auto& util = r.node[static_cast<std::size_t>(Metric::GpuUtil)];
  EXPECT_TRUE(std::isnan(util[0]));
  EXPECT_EQ(util[1], 50);
  EXPECT_EQ(util[3], 70);
  EXPECT_EQ(r.node[static_cast<std::size_t>(Metric::GpuMemory)][1], 1.5f);  // GiB
  EXPECT_EQ(r.node[static_cast<std::size_t>(Metric::GpuPower)][1], 300);    // only GPU 0 says
  EXPECT_EQ(r.node[static_cast<std::size_t>(Metric::NetRx)][1], 4000);      // counts from time 0
  EXPECT_EQ(r.node[static_cast<std::size_t>(Metric::NetRx)][2], 4000);
  const auto& lines = r.lines[static_cast<std::size_t>(Metric::GpuUtil)];
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].label, "n1 GPU 0");
  EXPECT_FALSE(lines[0].idle);
  EXPECT_TRUE(lines[1].idle);
  EXPECT_EQ(r.lines[static_cast<std::size_t>(Metric::Cpu)][0].label, "n1 rank 4");
  EXPECT_EQ(r.lines[static_cast<std::size_t>(Metric::NetTx)][1].label, "n1 mlx5_0:1 (IB)");
}

TEST(MonitorSeries, ACounterThatWentBackIsNoRate) {
  const TimeAxis axis = TimeAxis::over(0, 3, 1);
  NodeSeriesBuilder b(axis, "n1", 0);
  b.add({1, NetSample{"eth0", false, 5000, 5000}});
  b.add({2, NetSample{"eth0", false, 100, 100}});  // a driver reload
  b.add({3, NetSample{"eth0", false, 300, 300}});
  const auto result = b.finish({});
  const auto& rx = result.node[static_cast<std::size_t>(Metric::NetRx)];
  EXPECT_EQ(rx[1], 5000);
  EXPECT_TRUE(std::isnan(rx[2]));
  EXPECT_EQ(rx[3], 200);
}

TEST(MonitorSeries, SamplesInOneBinAreAveragedAndALateNodeIsShifted) {
  const TimeAxis axis = TimeAxis::over(0, 100, 0.1);  // 480 bins of 0.208 s
  NodeSeriesBuilder b(axis, "n2", 50);                 // started 50 s after the first node
  b.add({0.01, GpuSample{0, 10, std::nullopt, std::nullopt}});
  b.add({0.02, GpuSample{0, 30, std::nullopt, std::nullopt}});
  const auto result = b.finish({});
  const auto& util = result.node[static_cast<std::size_t>(Metric::GpuUtil)];
  EXPECT_EQ(util[axis.bin_of(50)], 20);
  EXPECT_TRUE(std::isnan(util[0]));
}

TEST(MonitorSeries, LinesAreKeptForSmallStepsOnly) {
  const TimeAxis axis = TimeAxis::over(0, 2, 1);
  StepSeries step(axis, 3);
  for (int node = 0; node < 3; ++node) {
    NodeSeriesBuilder b(axis, "n" + std::to_string(node), 0);
    for (unsigned g = 0; g < 8; ++g) b.add({1, GpuSample{g, 50, std::nullopt, std::nullopt}});
    b.add({1, CpuSample{0, 10}});
    step.add_node(static_cast<std::size_t>(node), b.finish({}));
    // 8, 16, then 24 GPU lines: more than kMaxLines drops them all; one rank per node stays.
    EXPECT_EQ(step.lines(Metric::GpuUtil).size(), node < 2 ? 8u * (node + 1) : 0u);
  }
  EXPECT_EQ(step.lines(Metric::Cpu).size(), 3u);
  EXPECT_EQ(step.node_values(Metric::GpuUtil).size(), 3u);
  EXPECT_TRUE(step.has_data(Metric::GpuUtil));
  EXPECT_FALSE(step.has_data(Metric::GpuPower));
}

TEST(MonitorSeries, NodesMayComeInAnyOrder) {
  const TimeAxis axis = TimeAxis::over(0, 2, 1);
  StepSeries step(axis, 3);
  for (std::size_t node : {2, 0}) {
    NodeSeriesBuilder b(axis, "n" + std::to_string(node), 0);
    b.add({1, CpuSample{static_cast<unsigned>(node), 10.0f * node}});
    b.add({1, CpuSample{static_cast<unsigned>(node) + 10, 1}});
    step.add_node(node, b.finish({}));
  }
  std::vector<std::string> labels;
  for (const Line& l : step.lines(Metric::Cpu)) labels.push_back(l.label);
  EXPECT_EQ(labels, (std::vector<std::string>{"n0 rank 0", "n0 rank 10", "n2 rank 2", "n2 rank 12"}));
  EXPECT_EQ(step.node_values(Metric::Cpu)[2][1], 10.5f);
  EXPECT_TRUE(std::isnan(step.node_values(Metric::Cpu)[1][1]));  // never added
}

TEST(MonitorSeries, TheSpreadIsTakenOverTheNodesThatHaveAValue) {
  std::vector<std::vector<float>> nodes;
  for (int i = 1; i <= 9; ++i) nodes.push_back({static_cast<float>(i * 10), kNoValue});
  nodes.push_back({kNoValue, 5});
  const Spread s = spread_of(nodes, 2);
  EXPECT_EQ(s.min[0], 10);
  EXPECT_EQ(s.q1[0], 30);
  EXPECT_EQ(s.median[0], 50);
  EXPECT_EQ(s.q3[0], 70);
  EXPECT_EQ(s.max[0], 90);
  EXPECT_EQ(s.min[1], 5);
  EXPECT_EQ(s.max[1], 5);
}
