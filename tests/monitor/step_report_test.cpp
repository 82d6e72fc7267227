// ddp-report's reading: files and directories, a file's head and tail, errors at file:line, a last
// line cut short, steps grouped, nodes in order and on one time axis.
#include <gtest/gtest.h>

#include <cmath>

#include "monitor_files.hpp"
#include "report_test_util.hpp"
#include "step_report.hpp"

using namespace ddp::monitor;
using namespace ddp::monitor::test;

namespace {

StepData read_all(const std::vector<std::string>& paths) {
  std::vector<FileHead> heads;
  for (const MonitorFile& f : monitor_files(paths)) heads.push_back(read_head(f));
  auto steps = group_by_step(std::move(heads));
  EXPECT_EQ(steps.size(), 1u);
  return read_step(steps.at(0));
}

}  // namespace

TEST(MonitorReport, ATwoNodeStepInNodeOrderOnOneTimeAxis) {
  Dir d;
  d.write("ddp-monitor-7.0-n2.jsonl", node_file(7, 1, 2, "n2", 1000.5, 0));
  d.write("ddp-monitor-7.0-n1.jsonl", node_file(7, 0, 2, "n1", 1000, 80));
  d.write("notes.txt", "not a monitor file\n");
  const StepData step = read_all({d.path()});
  ASSERT_EQ(step.nodes.size(), 2u);
  EXPECT_EQ(step.nodes[0].summary.start->node, "n1");
  EXPECT_EQ(step.expected_nodes, 2u);
  // n2 started 0.5 s after n1 and both sampled 2 s: the axis spans 2.5 s in 1 s bins.
  const TimeAxis& axis = step.series.axis();
  EXPECT_DOUBLE_EQ(axis.origin_unix, 1000);
  EXPECT_DOUBLE_EQ(axis.span, 2.5);
  EXPECT_DOUBLE_EQ(axis.bin_seconds, 1);
  EXPECT_EQ(axis.bins, 3u);
  const auto& util = step.series.node_values(Metric::GpuUtil);
  ASSERT_EQ(util.size(), 2u);
  EXPECT_TRUE(std::isnan(util[0][0]));
  EXPECT_EQ(util[0][1], 80);  // n1's samples at 1 and 2 s
  EXPECT_EQ(util[0][2], 80);
  EXPECT_TRUE(std::isnan(util[1][0]));  // n2's at 1.5 and 2.5 s
  EXPECT_EQ(util[1][1], 0);
  EXPECT_EQ(util[1][2], 0);
  const auto& lines = step.series.lines(Metric::GpuUtil);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1].label, "n2 GPU 0");
  EXPECT_TRUE(lines[1].idle);
  EXPECT_FALSE(lines[0].idle);
}

TEST(MonitorReport, AFileHeadIsItsStartAndItsLastCompleteRecord) {
  Dir d;
  const std::string whole = d.write("a.jsonl", node_file(1, 0, 1, "n1", 5, 50, 1, 3));
  EXPECT_EQ(read_head(whole).last_time, 3);
  EXPECT_EQ(read_head(whole).start.node, "n1");
  const std::string cut = d.write("b.jsonl", node_file(1, 0, 1, "n1", 5, 50, 1, 3, -1, false) +
                                                 R"({"kind":"cpu","time":4,"ra)");
  EXPECT_EQ(read_head(cut).last_time, 3);
  // Only the start record: no time after 0.
  const std::string alone = d.write("c.jsonl", lines({{0, StartRecord{1, 0, "n1", 0, 1, 1, 5, 1}}}));
  EXPECT_EQ(read_head(alone).last_time, 0);
  // A tail longer than what is read of it (64 KiB) still ends at its last record.
  std::vector<Record> many = {{0, StartRecord{1, 0, "n1", 0, 1, 1, 5, 1}}};
  for (int i = 1; i <= 5000; ++i) many.push_back({static_cast<double>(i), CpuSample{0, 12.5}});
  EXPECT_EQ(read_head(d.write("d.jsonl", lines(many))).last_time, 5000);
}

TEST(MonitorReport, StepsAreKeptApart) {
  Dir d;
  std::vector<FileHead> heads = {read_head(d.write("a.jsonl", node_file(8, 0, 1, "n1", 1, 50))),
                                 read_head(d.write("b.jsonl", node_file(7, 0, 1, "n1", 1, 50)))};
  const auto steps = group_by_step(std::move(heads));
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0].job, 7u);
  EXPECT_EQ(steps[1].job, 8u);
}

TEST(MonitorReport, BadFilesNameTheLine) {
  Dir d;
  const std::string start = lines({{0, StartRecord{1, 0, "n1", 0, 1, 1, 5, 1}}});
  const std::string bad = d.write("bad.jsonl", start + R"({"kind":"cpu","time":1,"rank":0,"cpu":"abc"})" "\n");
  EXPECT_EQ(error_of([&] { read_node_log(bad); }),
            bad + ":2: a cpu record's \"cpu\" is not a number of 0 or more. Fix: give ddp-report "
                  "the files ddp-monitor wrote, unchanged");
  const std::string none = d.write("none.jsonl", "hello world\n");
  EXPECT_EQ(error_of([&] { read_head(none); }),
            none + ":1: is not a ddp-monitor file: not JSON: column 1: syntax error while parsing "
                   "value - invalid literal; last read: 'h'. Fix: give ddp-report the files "
                   "ddp-monitor wrote (ddp-monitor-*.jsonl)");
  const std::string not_start = d.write("cpu.jsonl", R"({"kind":"cpu","time":1,"rank":0,"cpu":5})" "\n");
  EXPECT_NE(error_of([&] { read_node_log(not_start); }).find("it does not begin with a start record"),
            std::string::npos);
  const std::string empty_file = d.write("empty.jsonl", "");
  EXPECT_EQ(error_of([&] { read_head(empty_file); }),
            empty_file + ": is empty; the sampler was stopped before it began");
  EXPECT_NE(error_of([&] { monitor_files({d.path() + "/missing"}); }).find("does not exist"),
            std::string::npos);
  Dir empty;
  EXPECT_NE(error_of([&] { monitor_files({empty.path()}); }).find("holds no ddp-monitor-*.jsonl"),
            std::string::npos);
}

TEST(MonitorReport, ALastLineCutShortIsSkippedWithAWarning) {
  Dir d;
  const std::string f =
      d.write("cut.jsonl", lines({{0, StartRecord{1, 0, "n1", 0, 1, 1, 5, 1}}, {1, CpuSample{0, 50}}}) +
                               R"({"kind":"cpu","time":2,"ra)");
  const NodeLog log = read_node_log(f);
  EXPECT_EQ(log.summary.tasks.size(), 1u);
  ASSERT_EQ(log.warnings.size(), 1u);
  EXPECT_EQ(log.warnings[0], f + ":3: the last line is cut short and was skipped");
  EXPECT_FALSE(log.summary.end_reason);
}

TEST(MonitorReport, TheFilesOfAJobAndStepInADirectory) {
  Dir d;
  for (const char* name : {"ddp-monitor-6.0-n1.jsonl", "ddp-monitor-60.0-n1.jsonl", "ddp-monitor-60.1-n1.jsonl",
                           "ddp-monitor-60.10-n1.jsonl", "ddp-monitor-60.1-n2.jsonl", "ddp-monitor-60.1-n1.txt"})
    d.write(name, "");
  const auto names = [&](const std::vector<MonitorFile>& files) {
    std::vector<std::string> out;
    for (const MonitorFile& f : files) out.push_back(f.name);
    return out;
  };
  EXPECT_EQ(names(job_files_in(d.path(), 60, std::nullopt)),
            (std::vector<std::string>{"ddp-monitor-60.0-n1.jsonl", "ddp-monitor-60.1-n1.jsonl",
                                      "ddp-monitor-60.1-n2.jsonl", "ddp-monitor-60.10-n1.jsonl"}));
  EXPECT_EQ(names(job_files_in(d.path(), 60, 1)),
            (std::vector<std::string>{"ddp-monitor-60.1-n1.jsonl", "ddp-monitor-60.1-n2.jsonl"}));
  EXPECT_TRUE(job_files_in(d.path() + "/missing", 60, 1).empty());
}
