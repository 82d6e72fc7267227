// What a report flags: idle GPUs, slow nodes against the median node, and the worst nodes a
// large step's charts draw.
#include <gtest/gtest.h>

#include "report_test_util.hpp"
#include "step_report.hpp"
#include "verdicts.hpp"

using namespace ddp::monitor;
using namespace ddp::monitor::test;

namespace {

// One node per entry of `util` (2 GPUs each); `idle` names a node whose GPU 1 does nothing.
StepData step_of(const std::vector<double>& util, int idle_node = -1, bool gpus = true) {
  Dir d;
  std::vector<FileHead> heads;
  for (std::size_t i = 0; i < util.size(); ++i) {
    const auto n = static_cast<unsigned>(i);
    std::string text = node_file(5, n, static_cast<unsigned>(util.size()), "n" + std::to_string(n + 1),
                                 100, util[i], 2, 3, static_cast<int>(i) == idle_node ? 1 : -1);
    if (!gpus) {  // the same node without GPU readings: CPU use says how busy it was
      std::string kept;
      std::size_t pos = 0;
      while (pos < text.size()) {
        const std::size_t nl = text.find('\n', pos);
        std::string line = text.substr(pos, nl - pos);
        if (line.find("\"gpu") == std::string::npos) {
          if (line.find("\"cpu\",") != std::string::npos)
            line = format_record({1, CpuSample{n * 2, util[i]}});
          kept += line + "\n";
        }
        pos = nl + 1;
      }
      text = kept;
    }
    heads.push_back(read_head(d.write("n" + std::to_string(i) + ".jsonl", text)));
  }
  return read_step(group_by_step(std::move(heads)).at(0));
}

std::vector<std::string> names(const StepData& s, const std::vector<std::size_t>& nodes) {
  std::vector<std::string> out;
  for (std::size_t i : nodes) out.push_back(s.nodes[i].summary.start->node);
  return out;
}

}  // namespace

TEST(MonitorVerdicts, AnIdleGpuIsFlaggedAndDoesNotMakeItsNodeSlow) {
  const StepData s = step_of({90, 92, 91}, 1);
  const Verdicts v = judge(s);
  ASSERT_EQ(v.idle.size(), 1u);
  EXPECT_EQ(v.idle[0].node, 1u);
  EXPECT_EQ(v.idle[0].gpu, 1u);
  EXPECT_TRUE(v.slow.empty());
  EXPECT_TRUE(v.gpu_step);
  EXPECT_EQ(v.median_activity, 91);
  EXPECT_EQ(v.flagged, (std::vector<bool>{false, true, false}));
}

TEST(MonitorVerdicts, ANodeBelowThreeQuartersOfTheMedianIsSlow) {
  const StepData s = step_of({90, 60, 92, 95, 67});
  const Verdicts v = judge(s);
  EXPECT_EQ(v.median_activity, 90);
  ASSERT_EQ(v.slow.size(), 2u);  // 60 and 67 < 67.5; 67.5 would not be
  EXPECT_EQ(names(s, {v.slow[0].node, v.slow[1].node}), (std::vector<std::string>{"n2", "n5"}));
  EXPECT_EQ(v.slow[0].activity, 60);
  // Flagged nodes and then the least active others, least active first, at least kWorstNodes.
  EXPECT_EQ(names(s, v.worst), (std::vector<std::string>{"n2", "n5", "n1"}));
}

TEST(MonitorVerdicts, OfTwoNodesTheLessBusyIsMeasuredAgainstTheBusier) {
  EXPECT_EQ(judge(step_of({90, 60})).slow.size(), 1u);
  EXPECT_TRUE(judge(step_of({90, 70})).slow.empty());
  EXPECT_TRUE(judge(step_of({90})).slow.empty());
}

TEST(MonitorVerdicts, IdleStepsHaveNoSlowNodes) {
  EXPECT_TRUE(judge(step_of({1, 4, 0})).slow.empty());
}

TEST(MonitorVerdicts, WithoutGpuReadingsTheRanksCpuUseSays) {
  const StepData s = step_of({100, 40, 100}, -1, false);
  const Verdicts v = judge(s);
  EXPECT_FALSE(v.gpu_step);
  EXPECT_EQ(v.activity_name(), "CPU use per rank");
  ASSERT_EQ(v.slow.size(), 1u);
  EXPECT_EQ(names(s, {v.slow[0].node}), std::vector<std::string>{"n2"});
}

TEST(MonitorVerdicts, ManyFlaggedNodesAreCappedAndTheWorstComeFirst) {
  std::vector<double> util(20, 90);
  for (int i : {3, 5, 7, 9, 11, 13}) util[static_cast<std::size_t>(i)] = 10.0 + i;
  const StepData s = step_of(util);
  const Verdicts v = judge(s);
  EXPECT_EQ(v.slow.size(), 6u);
  EXPECT_EQ(names(s, v.worst), (std::vector<std::string>{"n4", "n6", "n8", "n10", "n12"}));
}

TEST(MonitorVerdicts, NodeFiguresAndStepTotals) {
  const StepData s = step_of({80, 40}, 1);
  const NodeFigures f = figures_of(s.nodes[1].summary);
  EXPECT_EQ(f.gpu_util_mean, 20);  // 40 and the idle 0
  EXPECT_EQ(f.gpu_mem_peak_gib, 11);
  EXPECT_EQ(f.cpu_mean, 50);
  EXPECT_EQ(f.rx_bytes, 3000000);
  const StepTotals t = totals_of(s);
  EXPECT_EQ(t.gpus, 4u);
  EXPECT_EQ(t.gpu_util_mean, 50);
  EXPECT_EQ(t.duration, 3);
}
