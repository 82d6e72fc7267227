// What ddp-report says of a step, as text, JSON and a page: a small step in full, a large one as
// its spread and worst nodes, the same verdicts in each.
#include <gtest/gtest.h>

#include <algorithm>

#include <regex>

#include "html_page.hpp"
#include "report_test_util.hpp"
#include "step_json.hpp"
#include "step_report.hpp"
#include "step_text.hpp"

using namespace ddp::monitor;
using namespace ddp::monitor::test;

namespace {

StepData step_of(unsigned nodes, unsigned gpus, int slow_node, int idle_node) {
  Dir d;
  std::vector<FileHead> heads;
  for (unsigned n = 0; n < nodes; ++n)
    heads.push_back(read_head(d.write(
        "ddp-monitor-9.0-n" + std::to_string(n + 1) + ".jsonl",
        node_file(9, n, nodes, "n" + std::to_string(n + 1), 100 + n * 0.01,
                  static_cast<int>(n) == slow_node ? 40 : 90, gpus, 5,
                  static_cast<int>(n) == idle_node ? 0 : -1))));
  return read_step(group_by_step(std::move(heads)).at(0));
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST(MonitorReportOutput, ASmallStepShowsEveryNode) {
  const StepData s = step_of(2, 2, -1, 1);
  const std::string text = format_step(s, judge(s));
  EXPECT_EQ(text.substr(0, text.find('\n')),
            "job 9 step 0: 2 of 2 nodes, 4 GPUs, 5.0 s, mean GPU utilisation 68%, 1 idle (n2 GPU 0)");
  EXPECT_EQ(count(text, "ddp-monitor: node "), 2u);
}

TEST(MonitorReportOutput, ALargeStepShowsItsSpreadAndWorstNodesOnly) {
  const StepData s = step_of(40, 1, 17, 30);
  const Verdicts v = judge(s);
  const std::string text = format_step(s, v);
  EXPECT_EQ(text.substr(0, text.find('\n')),
            "job 9 step 0: 40 of 40 nodes, 40 GPUs, 5.0 s, mean GPU utilisation 86%, 1 idle (n31 GPU "
            "0), 1 slow (n18 40%; GPU utilisation, the median node 90%)");
  EXPECT_TRUE(std::regex_search(text, std::regex("\n  GPU utilisation, mean +0% +90% +90%\n"))) << text;
  EXPECT_NE(text.find("the 3 nodes with the least GPU utilisation or a flag; the other 37 lie within "
                      "the spread above (ddp-report --json lists every node):\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(count(text, "ddp-monitor: node "), 3u);
  EXPECT_NE(text.find("ddp-monitor: node n18 "), std::string::npos);
  EXPECT_NE(text.find("ddp-monitor: node n31 "), std::string::npos);
  // The text of 40 nodes is as long as that of 4,000 would be: it grows with nothing.
  EXPECT_LT(std::count(text.begin(), text.end(), '\n'), 40);
}

TEST(MonitorReportOutput, TheJsonHasEveryNodeAndTheVerdicts) {
  const StepData s = step_of(20, 2, 3, 4);
  const auto j = step_json(s, judge(s));
  EXPECT_EQ(j["job"], 9);
  EXPECT_EQ(j["nodes_reported"], 20);
  EXPECT_EQ(j["gpus"], 40);
  EXPECT_EQ(j["nodes"].size(), 20u);
  EXPECT_EQ(j["activity"], "gpu_util");
  EXPECT_EQ(j["idle_gpus"].dump(), R"([{"node":"n5","gpu":0,"util_mean":0.0}])");
  EXPECT_EQ(j["slow_nodes"].dump(), R"([{"node":"n4","activity":40.0}])");
  EXPECT_EQ(j["worst_nodes"][0], "n4");
  const auto& n5 = j["nodes"][4];
  EXPECT_EQ(n5["node"], "n5");
  EXPECT_EQ(n5["gpus"][0]["idle"], true);
  EXPECT_EQ(n5["gpus"][1]["util_mean"], 90.0);
  EXPECT_EQ(n5["gpus"][1]["name"], "GPU X");
  EXPECT_EQ(n5["tasks"].size(), 2u);
  EXPECT_EQ(n5["nics"][0]["rx_bytes"], 5000000);
  EXPECT_EQ(n5["complete"], true);
}

TEST(MonitorReportOutput, ThePageIsSelfContainedAndDrawsEveryMetric) {
  const StepData small = step_of(2, 2, -1, 1);
  const StepData large = step_of(40, 2, 17, 30);
  const std::string page = render_page({{&small, judge(small)}, {&large, judge(large)}}, "ddp-report test");
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  for (const char* outside : {"<script src", "<link", "<img", "url(", "@import", "http://", "https://"})
    EXPECT_EQ(page.find(outside), std::string::npos) << outside;
  // Both steps, each with a chart per metric sampled; lines for the small one, spread for the large.
  for (const char* metric : {"gpu_util", "gpu_memory", "gpu_power", "cpu", "net_rx", "net_tx"}) {
    EXPECT_NE(page.find("id=\"chart-9.0-" + std::string(metric) + "\" data-metric=\"" + metric +
                        "\" data-mode=\"lines\""),
              std::string::npos)
        << metric;
  }
  EXPECT_EQ(count(page, "data-mode=\"spread\""), 6u);
  EXPECT_NE(page.find("<g class=\"series line idle\" data-series=\"n2 GPU 0\" data-node=\"n2\">"),
            std::string::npos);
  EXPECT_NE(page.find("<g class=\"series line slow\" data-series=\"n18\" data-node=\"n18\">"),
            std::string::npos);
  EXPECT_NE(page.find("<g class=\"series line idle\" data-series=\"n31\" data-node=\"n31\">"),
            std::string::npos);
  EXPECT_NE(page.find("data-series=\"nodes median\""), std::string::npos);
  // The readout's data: one entry per chart drawn.
  EXPECT_EQ(count(page, "\"figure\":\"chart-"), 12u);
  // The large step's node table lists its worst nodes and counts the rest.
  EXPECT_NE(page.find("and 37 other nodes"), std::string::npos);
}

TEST(MonitorReportOutput, NamesAreEscapedInThePage) {
  Dir d;
  std::vector<Record> r = {{0, StartRecord{3, 0, "n</script><1>", 0, 1, 1, 5, 1}},
                           {0, GpuInfo{0, "", "A&B", 1024}},
                           {1, GpuSample{0, 50, 10, 10}}};
  std::vector<FileHead> heads = {read_head(d.write("a.jsonl", lines(r)))};
  const StepData s = read_step(group_by_step(std::move(heads)).at(0));
  const std::string page = render_page({{&s, judge(s)}}, "t");
  EXPECT_EQ(page.find("<1>"), std::string::npos);
  EXPECT_NE(page.find("data-series=\"n&lt;/script&gt;&lt;1&gt; GPU 0\""), std::string::npos);
  EXPECT_EQ(count(page, "</script>"), 2u);  // the data's and the script's own
}
