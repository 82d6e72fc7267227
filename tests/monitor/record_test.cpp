// The per-node file's lines: every kind written and read back, and what a reader refuses.
#include <gtest/gtest.h>

#include "error.hpp"
#include "record.hpp"

using namespace ddp::monitor;

namespace {

Record roundtrip(const Record& r) {
  const auto back = parse_record(format_record(r));
  EXPECT_TRUE(back.has_value()) << format_record(r);
  return back.value_or(Record{});
}

}  // namespace

TEST(MonitorRecord, EveryKindIsWrittenAsDocumentedAndReadBack) {
  StartRecord start{17, 2, "gn01", 1, 4, 10, 1718000000.125, 4711};
  EXPECT_EQ(format_record({0, start}),
            "start 0 job=17 step=2 node=gn01 node_index=1 nodes=4 interval=10 unix=1718000000.125 "
            "pid=4711");
  const auto s = std::get<StartRecord>(roundtrip({0, start}).body);
  EXPECT_EQ(s.job, 17u);
  EXPECT_EQ(s.node, "gn01");
  EXPECT_DOUBLE_EQ(s.unix_time, 1718000000.125);
  EXPECT_EQ(s.pid, 4711);

  GpuInfo info{3, "0000:3b:00.0", "NVIDIA A100-SXM4-40GB", 40960};
  EXPECT_EQ(format_record({0.012, info}),
            "gpu-info 0.012 gpu=3 bus=0000:3b:00.0 name=NVIDIA_A100-SXM4-40GB mem_total_mib=40960");
  EXPECT_EQ(std::get<GpuInfo>(roundtrip({0, info}).body).name, "NVIDIA_A100-SXM4-40GB");

  GpuSample g{3, 87, 30512.4, 291.46};
  EXPECT_EQ(format_record({10.0004, g}), "gpu 10 gpu=3 util=87 mem_used_mib=30512 power_w=291.5");
  GpuSample no_power{1, 0, 512, std::nullopt};
  const auto back = std::get<GpuSample>(roundtrip({1, no_power}).body);
  EXPECT_FALSE(back.power_w);
  EXPECT_EQ(back.util, 0);

  EXPECT_EQ(format_record({1.5, CpuSample{5, 98.54}}), "cpu 1.5 rank=5 cpu=98.5");
  EXPECT_EQ(format_record({2, NetSample{"eth0", false, 123, 456}}),
            "net 2 nic=eth0 rx_bytes=123 tx_bytes=456");
  const auto ib = std::get<NetSample>(roundtrip({2, NetSample{"mlx5_0:1", true, 1ull << 40, 7}}).body);
  EXPECT_TRUE(ib.ib);
  EXPECT_EQ(ib.rx_bytes, 1ull << 40);
  EXPECT_EQ(format_record({0.1, TaskInfo{4, 0, 4242}}), "task 0.1 rank=4 local=0 pid=4242");
  EXPECT_EQ(format_record({0.2, Note{"NVML is not available:\nno driver"}}),
            "note 0.2 NVML is not available: no driver");
  EXPECT_EQ(std::get<Note>(roundtrip({0.2, Note{"a = b, c"}}).body).text, "a = b, c");
  EXPECT_EQ(format_record({12, EndRecord{"step-ended"}}), "end 12 reason=step-ended");
}

TEST(MonitorRecord, ReadersSkipCommentsAndWhatTheyDoNotKnow) {
  EXPECT_FALSE(parse_record("# ddp-monitor 1"));
  EXPECT_FALSE(parse_record(""));
  EXPECT_FALSE(parse_record("   "));
  EXPECT_FALSE(parse_record("fan 1.0 gpu=0 rpm=3000"));  // a later format's kind
  const auto g = parse_record("gpu 1 gpu=0 util=5 sm_clock_mhz=1410\r");  // and key
  ASSERT_TRUE(g);
  EXPECT_EQ(std::get<GpuSample>(g->body).util, 5);
}

TEST(MonitorRecord, MalformedRecordsAreErrorsThatSayWhat) {
  const auto error = [](const std::string& line) {
    try {
      parse_record(line);
    } catch (const ddp::plan::PlanError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(error("gpu"), "a record needs KIND and TIME");
  EXPECT_EQ(error("gpu x gpu=0"), "TIME='x' is not a number");
  EXPECT_EQ(error("cpu 1 cpu=50"), "a cpu record without rank=");
  EXPECT_EQ(error("gpu 1 gpu=0 util=-3"), "util='-3' is not a number");
  EXPECT_NE(error("net 1 nic=eth0 rx_bytes=1e3 tx_bytes=0").find("rx_bytes"), std::string::npos);
}
