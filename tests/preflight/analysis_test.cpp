// The verdict from the numbers: the slowest node and link against the median, the thresholds,
// and the node a resubmitted job should leave out.
#include "analysis.hpp"

#include <algorithm>

#include <gtest/gtest.h>

#include "report.hpp"

namespace {

using ddp::preflight::Measurement;
using ddp::preflight::Thresholds;

Measurement link(const std::string& a, const std::string& b, double busbw, double latency_us = 100) {
  Measurement m;
  m.name = a + " <-> " + b;
  m.nodes = {a, b};
  m.ranks = 2;
  m.busbw_gbps = busbw;
  m.latency_us = latency_us;
  return m;
}

Measurement all_ranks(double busbw, double latency_us = 200, int ranks = 4) {
  Measurement m;
  m.name = "all ranks";
  m.ranks = ranks;
  m.busbw_gbps = busbw;
  m.latency_us = latency_us;
  return m;
}

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += s + "|";
  return out;
}

TEST(PreflightAnalysis, Median) {
  EXPECT_DOUBLE_EQ(ddp::preflight::median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(ddp::preflight::median({4, 1, 2, 3}), 2.5);
  EXPECT_DOUBLE_EQ(ddp::preflight::median({}), 0);
}

TEST(PreflightAnalysis, HealthyLinksPassAndNothingIsSlow) {
  const auto a = ddp::preflight::analyse(all_ranks(10), {link("n1", "n2", 10), link("n1", "n3", 9.5),
                                                         link("n2", "n3", 10.2)}, {});
  EXPECT_TRUE(a.passed());
  ASSERT_TRUE(a.slowest_node);
  ASSERT_TRUE(a.slowest_link);
  EXPECT_EQ(a.slowest_link->name, "n1 <-> n3");
  EXPECT_FALSE(a.slowest_node->slow);
  EXPECT_FALSE(a.slowest_link->slow);
}

// One slow node: all its links are slow, so the median link is too; a node is as fast as its
// best link, and the median node is a healthy one.
TEST(PreflightAnalysis, ASlowNodeIsNamedAgainstTheMedianNode) {
  const auto a = ddp::preflight::analyse(
      all_ranks(0.003), {link("n1", "n2", 0.7), link("n1", "n3", 0.003), link("n2", "n3", 0.0031)}, {});
  ASSERT_TRUE(a.slowest_node);
  EXPECT_EQ(a.slowest_node->name, "n3");
  EXPECT_TRUE(a.slowest_node->slow);
  EXPECT_NEAR(a.slowest_node->fraction, 0.0031 / 0.7, 1e-9);
  EXPECT_TRUE(a.slowest_link->slow) << "compared with the median node, not the median link";
  EXPECT_TRUE(a.passed()) << "no threshold, no failure";
}

TEST(PreflightAnalysis, AMissedThresholdExcludesTheSlowNode) {
  Thresholds t;
  t.min_busbw_gbps = 0.05;
  t.origin = "profile lab";
  const auto a = ddp::preflight::analyse(
      all_ranks(0.003), {link("n1", "n2", 0.7), link("n1", "n3", 0.003), link("n2", "n3", 0.0031)}, t);
  ASSERT_FALSE(a.passed());
  EXPECT_EQ(a.failures.size(), 3u) << joined(a.failures);
  EXPECT_EQ(a.failures[1], "n1 <-> n3: bus bandwidth 0.003 GB/s is below min_busbw_gbps=0.05 (profile lab)");
  EXPECT_EQ(a.exclude, std::vector<std::string>{"n3"});
  EXPECT_EQ(a.advice, "resubmit without it: sbatch --exclude=n3 ...");
}

TEST(PreflightAnalysis, LatencyAndFractionThresholds) {
  Thresholds t;
  t.max_latency_us = 150;
  auto a = ddp::preflight::analyse(all_ranks(10, 120), {link("n1", "n2", 10, 90), link("n1", "n3", 10, 400),
                                                        link("n2", "n3", 10, 95)}, t);
  ASSERT_EQ(a.failures.size(), 1u);
  EXPECT_EQ(a.failures[0], "n1 <-> n3: latency 400 us is above max_latency_us=150");
  EXPECT_TRUE(a.exclude.empty()) << "one failing link between two nodes that reach the others";
  EXPECT_NE(a.advice.find("only the link n1 <-> n3 fails"), std::string::npos) << a.advice;
  EXPECT_NE(a.advice.find("--exclude=n1 or --exclude=n3"), std::string::npos) << a.advice;

  Thresholds f;
  f.min_fraction_of_median = 0.8;
  a = ddp::preflight::analyse(std::nullopt, {link("n1", "n2", 10), link("n1", "n3", 7),
                                             link("n2", "n3", 7)}, f);
  ASSERT_EQ(a.failures.size(), 1u) << joined(a.failures);
  EXPECT_NE(a.failures[0].find("node n3: its best link reaches 0.7x the median node's 10.00 GB/s, "
                               "below min_fraction_of_median=0.8"), std::string::npos) << a.failures[0];
  EXPECT_EQ(a.exclude, std::vector<std::string>{"n3"}) << "not slow by the report's rule, but by the site's";
}

TEST(PreflightAnalysis, TwoNodesCannotTellWhichEndIsSlow) {
  Thresholds t;
  t.min_busbw_gbps = 1;
  const auto a = ddp::preflight::analyse(all_ranks(0.01), {link("n1", "n2", 0.01)}, t);
  EXPECT_FALSE(a.passed());
  EXPECT_FALSE(a.slowest_node);
  ASSERT_TRUE(a.slowest_link);
  EXPECT_DOUBLE_EQ(a.slowest_link->fraction, 1.0);
  EXPECT_TRUE(a.exclude.empty());
  EXPECT_NE(a.advice.find("with two nodes the preflight cannot tell which end of the link is slow: "
                          "resubmit with --exclude=n1 or --exclude=n2"), std::string::npos) << a.advice;
}

TEST(PreflightAnalysis, OnlyTheAllRanksMeasurementFailingNamesNoNode) {
  Thresholds t;
  t.min_busbw_gbps = 5;
  const auto a = ddp::preflight::analyse(all_ranks(2), {link("n1", "n2", 9), link("n1", "n3", 9),
                                                        link("n2", "n3", 9)}, t);
  ASSERT_EQ(a.failures.size(), 1u);
  EXPECT_TRUE(a.exclude.empty());
  EXPECT_NE(a.advice.find("no single node stands out"), std::string::npos);
}

TEST(PreflightAnalysis, OneRankMovesNothingAndIsNotJudged) {
  Thresholds t;
  t.min_busbw_gbps = 5;
  EXPECT_TRUE(ddp::preflight::analyse(all_ranks(0, 10, 1), {}, t).passed());
}

// A ring of 40 nodes, three of them slow (n7, n22 and n23 side by side): one run names all three,
// slowest first, in one --exclude= line, and the message names the first failures and counts the rest.
TEST(PreflightAnalysis, EverySlowNodeIsNamedInOneRun) {
  const auto speed = [](int n) { return n == 7 ? 0.5 : n == 22 ? 0.2 : n == 23 ? 0.3 : 10.0; };
  std::vector<Measurement> ring;
  for (int n = 0; n < 40; ++n) {
    const int next = (n + 1) % 40;
    ring.push_back(link("n" + std::to_string(n), "n" + std::to_string(next), std::min(speed(n), speed(next))));
  }
  Thresholds t;
  t.min_busbw_gbps = 5;
  const auto a = ddp::preflight::analyse(std::nullopt, ring, t);
  EXPECT_EQ(a.exclude, (std::vector<std::string>{"n22", "n23", "n7"})) << joined(a.exclude);
  EXPECT_EQ(a.advice, "resubmit without these nodes: sbatch --exclude=n22,n23,n7 ...");
  ASSERT_EQ(a.failures.size(), 5u) << joined(a.failures);  // n6-n7, n7-n8, n21-n22, n22-n23, n23-n24

  Thresholds f;
  f.min_fraction_of_median = 0.9;
  std::vector<Measurement> many;
  for (int n = 0; n < 40; ++n) {  // every third node at 0.1x: 14 nodes below the threshold
    const int next = (n + 1) % 40;
    const auto bw = [](int k) { return k % 3 == 0 ? 1.0 : 10.0; };
    many.push_back(link("n" + std::to_string(n), "n" + std::to_string(next), std::min(bw(n), bw(next))));
  }
  const auto b = ddp::preflight::analyse(std::nullopt, many, f);
  EXPECT_EQ(b.exclude.size(), 14u) << joined(b.exclude);
  const std::string message = ddp::preflight::failure_message(b);
  EXPECT_NE(message.find("; and 6 more. Fix: resubmit without these nodes: sbatch --exclude=n0,n12,"),
            std::string::npos) << message;
  EXPECT_LT(message.size(), 2048u) << message;
}

TEST(PreflightAnalysis, ExcludeOption) {
  EXPECT_EQ(ddp::preflight::exclude_option({}), "");
  EXPECT_EQ(ddp::preflight::exclude_option({"n3", "n5"}), "--exclude=n3,n5");
}

}  // namespace
