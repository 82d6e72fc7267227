// The per-node file's lines: every kind written as JSON and read back, and what a reader refuses.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "error.hpp"
#include "record.hpp"

using namespace ddp::monitor;

namespace {

Record roundtrip(const Record& r) {
  const auto back = parse_record(format_record(r));
  EXPECT_TRUE(back.has_value()) << format_record(r);
  return back.value_or(Record{});
}

std::string error(const std::string& line) {
  try {
    parse_record(line);
  } catch (const ddp::plan::PlanError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(MonitorRecord, EveryKindIsWrittenAsDocumentedAndReadBack) {
  StartRecord start{17, 2, "gn01", 1, 4, 10, 1718000000.125, 4711};
  EXPECT_EQ(format_record({0, start}),
            R"({"kind":"start","time":0,"format":2,"job":17,"step":2,"node":"gn01","node_index":1,)"
            R"("nodes":4,"interval":10,"unix":1718000000.125,"pid":4711})");
  const auto s = std::get<StartRecord>(roundtrip({0, start}).body);
  EXPECT_EQ(s.job, 17u);
  EXPECT_EQ(s.node, "gn01");
  EXPECT_DOUBLE_EQ(s.unix_time, 1718000000.125);
  EXPECT_EQ(s.pid, 4711);

  // Names keep their spaces.
  GpuInfo info{3, "0000:3b:00.0", "NVIDIA A100-SXM4-40GB", 40960};
  EXPECT_EQ(format_record({0.012, info}),
            R"({"kind":"gpu-info","time":0.012,"gpu":3,"bus":"0000:3b:00.0","name":"NVIDIA )"
            R"(A100-SXM4-40GB","mem_total_mib":40960})");
  EXPECT_EQ(std::get<GpuInfo>(roundtrip({0, info}).body).name, "NVIDIA A100-SXM4-40GB");

  GpuSample g{3, 87, 30512.4, 291.46};
  EXPECT_EQ(format_record({10.0004, g}),
            R"({"kind":"gpu","time":10,"gpu":3,"util":87,"mem_used_mib":30512,"power_w":291.5})");
  GpuSample no_power{1, 0, 512, std::nullopt};
  const auto back = std::get<GpuSample>(roundtrip({1, no_power}).body);
  EXPECT_FALSE(back.power_w);
  EXPECT_EQ(back.util, 0);

  EXPECT_EQ(format_record({1.5, CpuSample{5, 98.54}}), R"({"kind":"cpu","time":1.5,"rank":5,"cpu":98.5})");
  EXPECT_EQ(format_record({2, NetSample{"eth0", false, 123, 456}}),
            R"({"kind":"net","time":2,"nic":"eth0","rx_bytes":123,"tx_bytes":456})");
  const auto ib = std::get<NetSample>(roundtrip({2, NetSample{"mlx5_0:1", true, 1ull << 40, 7}}).body);
  EXPECT_TRUE(ib.ib);
  EXPECT_EQ(ib.rx_bytes, 1ull << 40);
  EXPECT_EQ(format_record({0.1, TaskInfo{4, 0, 4242}}),
            R"({"kind":"task","time":0.1,"rank":4,"local":0,"pid":4242})");
  // Line breaks and quotes in a note are escaped, so every record stays one line.
  EXPECT_EQ(format_record({0.2, Note{"NVML is not available:\n\"no driver\""}}),
            R"({"kind":"note","time":0.2,"text":"NVML is not available:\n\"no driver\""})");
  EXPECT_EQ(std::get<Note>(roundtrip({0.2, Note{"a = b,\nc"}}).body).text, "a = b,\nc");
  EXPECT_EQ(format_record({12, EndRecord{"step-ended"}}),
            R"({"kind":"end","time":12,"reason":"step-ended"})");
}

TEST(MonitorRecord, AnyJsonReaderReadsTheLines) {
  const auto j = nlohmann::json::parse(format_record({3.25, GpuInfo{0, "", "Tesla V100 \xff", 16160}}));
  EXPECT_EQ(j["kind"], "gpu-info");
  EXPECT_EQ(j["time"], 3.25);
  EXPECT_EQ(j["name"], "Tesla V100 \xEF\xBF\xBD");  // a byte that is not UTF-8 is replaced
  EXPECT_FALSE(j.contains("bus"));
}

TEST(MonitorRecord, ReadersSkipWhatTheyDoNotKnow) {
  EXPECT_FALSE(parse_record(""));
  EXPECT_FALSE(parse_record("   \r"));
  EXPECT_FALSE(parse_record(R"({"kind":"fan","time":1,"gpu":0,"rpm":3000})"));  // a later kind
  // ... and keys, nested ones too, in any order and with any spacing.
  const auto g = parse_record(
      R"( { "util": 5, "gpu": 0, "sm_clock": {"mhz": [1410]}, "time": 1, "kind": "gpu" } )");
  ASSERT_TRUE(g);
  EXPECT_EQ(std::get<GpuSample>(g->body).util, 5);
}

TEST(MonitorRecord, MalformedRecordsAreErrorsThatSayWhat) {
  EXPECT_EQ(error("gpu 1 gpu=0 util=5"), "not JSON: column 1: syntax error while parsing value - "
                                         "invalid literal; last read: 'g'");
  EXPECT_EQ(error(R"([1, 2])"), "a record is a JSON object, not an array");
  EXPECT_EQ(error(R"({"kind":"gpu"} {"kind":"gpu"})").substr(0, 9), "not JSON:");
  EXPECT_EQ(error(R"({"time":1,"gpu":0})"), "a record without a \"kind\" string");
  EXPECT_EQ(error(R"({"kind":"gpu","gpu":0})"), "a gpu record without \"time\"");
  EXPECT_EQ(error(R"({"kind":"cpu","time":1,"cpu":50})"), "a cpu record without \"rank\"");
  EXPECT_EQ(error(R"({"kind":"gpu","time":1,"gpu":0,"util":-3})"),
            "a gpu record's \"util\" is not a number of 0 or more");
  EXPECT_EQ(error(R"({"kind":"gpu","time":1,"gpu":0,"util":"5"})"),
            "a gpu record's \"util\" is not a number of 0 or more");
  EXPECT_EQ(error(R"({"kind":"net","time":1,"nic":"eth0","rx_bytes":1e3,"tx_bytes":0})"),
            "a net record's \"rx_bytes\" is not a whole number from 0 to 18446744073709551615");
  EXPECT_EQ(error(R"({"kind":"net","time":1,"nic":7,"rx_bytes":1,"tx_bytes":0})"),
            "a net record's \"nic\" is not a string");
  EXPECT_EQ(error(R"({"kind":"start","time":0,"format":1,"job":1,"step":0,"node":"n1",)"
                  R"("node_index":0,"nodes":1,"interval":1,"unix":5})"),
            "this file is in ddp-monitor's format 1, and this ddp-report reads format 2. Fix: use "
            "the ddp-report of the release that wrote it");
}
