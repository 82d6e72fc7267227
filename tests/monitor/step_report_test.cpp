// ddp-report's reading: files and directories, errors at file:line, a last line cut short,
// steps grouped, nodes in order, and the chart's shared time axis.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "error.hpp"
#include "step_report.hpp"

using namespace ddp::monitor;
namespace fs = std::filesystem;

namespace {

class Dir {
 public:
  Dir() : path_(fs::temp_directory_path() / ("ddp-report-" + std::to_string(getpid()))) {
    fs::create_directories(path_);
  }
  ~Dir() { fs::remove_all(path_); }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(path_ / name, std::ios::binary) << text;
    return (path_ / name).string();
  }
  std::string path() const { return path_.string(); }

 private:
  fs::path path_;
};

std::string node_file(unsigned job, unsigned index, const std::string& node, double unix,
                      unsigned util) {
  return "# ddp-monitor 1\nstart 0 job=" + std::to_string(job) + " step=0 node=" + node +
         " node_index=" + std::to_string(index) + " nodes=2 interval=1 unix=" + std::to_string(unix) +
         "\ngpu-info 0 gpu=0 name=X mem_total_mib=100\ngpu 1 gpu=0 util=" + std::to_string(util) +
         " mem_used_mib=10\ngpu 2 gpu=0 util=" + std::to_string(util) +
         " mem_used_mib=10\nend 2 reason=step-ended\n";
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ddp::plan::PlanError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(MonitorReport, AStepOfTwoNodesInNodeOrderWithAnIdleGpu) {
  Dir d;
  d.write("ddp-monitor-7.0-n2.txt", node_file(7, 1, "n2", 1000.5, 0));
  d.write("ddp-monitor-7.0-n1.txt", node_file(7, 0, "n1", 1000, 80));
  d.write("notes.txt", "not a monitor file\n");
  const auto files = monitor_files({d.path()});
  ASSERT_EQ(files.size(), 2u);
  std::vector<NodeLog> logs;
  for (const auto& f : files) logs.push_back(read_node_log(f));
  const auto steps = group_by_step(std::move(logs));
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].nodes[0].summary.start->node, "n1");
  const std::string text = format_step(steps[0]);
  EXPECT_EQ(text.substr(0, text.find('\n')),
            "job 7 step 0: 2 of 2 nodes, 2 GPUs, mean GPU utilisation 40%, 1 idle (n2 GPU 0)");
  EXPECT_LT(text.find("ddp-monitor: node n1"), text.find("ddp-monitor: node n2"));
  const GpuChart chart = step_chart(steps[0]);
  ASSERT_EQ(chart.gpus.size(), 2u);
  EXPECT_EQ(chart.gpus[1].label, "n2 GPU 0");
  EXPECT_TRUE(chart.gpus[1].idle);
  EXPECT_DOUBLE_EQ(chart.gpus[1].samples[0].first, 1.5);  // n2 started 0.5 s after n1
  EXPECT_DOUBLE_EQ(chart.duration, 2.5);
}

TEST(MonitorReport, StepsAreKeptApart) {
  Dir d;
  std::vector<NodeLog> logs = {read_node_log(d.write("a.txt", node_file(8, 0, "n1", 1, 50))),
                               read_node_log(d.write("b.txt", node_file(7, 0, "n1", 1, 50)))};
  const auto steps = group_by_step(std::move(logs));
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0].job, 7u);
}

TEST(MonitorReport, BadFilesNameTheLine) {
  Dir d;
  const std::string bad = d.write("bad.txt", "start 0 job=1 step=0 node=n1 node_index=0 nodes=1 "
                                             "interval=1 unix=5\ncpu 1 rank=0 cpu=abc\n");
  EXPECT_EQ(error_of([&] { read_node_log(bad); }),
            bad + ":2: cpu='abc' is not a number. Fix: give ddp-report the files ddp-monitor "
                  "wrote, unchanged");
  const std::string none = d.write("none.txt", "hello world\n");
  EXPECT_EQ(error_of([&] { read_node_log(none); }),
            none + ":1: is not a ddp-monitor file: it does not begin with a start record");
  const std::string empty_file = d.write("empty.txt", "# ddp-monitor 1\n");
  EXPECT_NE(error_of([&] { read_node_log(empty_file); }).find(": holds no records"),
            std::string::npos);
  EXPECT_NE(error_of([&] { monitor_files({d.path() + "/missing"}); }).find("does not exist"),
            std::string::npos);
  Dir empty;
  fs::remove(empty.path() + "/x");
  EXPECT_NE(error_of([&] { monitor_files({empty.path()}); }).find("holds no ddp-monitor-*.txt"),
            std::string::npos);
}

TEST(MonitorReport, ALastLineCutShortIsSkippedWithAWarning) {
  Dir d;
  const std::string f = d.write("cut.txt", "start 0 job=1 step=0 node=n1 node_index=0 nodes=1 "
                                           "interval=1 unix=5\ncpu 1 rank=0 cpu=50\ncpu 2 rank=0 cp");
  const NodeLog log = read_node_log(f);
  EXPECT_EQ(log.summary.tasks.size(), 1u);
  ASSERT_EQ(log.warnings.size(), 1u);
  EXPECT_EQ(log.warnings[0], f + ":3: the last line is cut short and was skipped");
  EXPECT_FALSE(log.summary.end_reason);
}
