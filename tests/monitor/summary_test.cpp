// Means, peaks, idle GPUs and NIC rates of one node, and the text that shows them.
#include <gtest/gtest.h>

#include "summary.hpp"

using namespace ddp::monitor;

namespace {

NodeSummary node_of(const std::vector<Record>& records) {
  NodeSummary n;
  for (const Record& r : records) n.add(r);
  return n;
}

std::vector<Record> two_gpus_one_idle() {
  return {
      {0, StartRecord{17, 0, "n1", 0, 2, 1, 1000}},
      {0, GpuInfo{0, "0000:3b:00.0", "A100", 40960}},
      {0, GpuInfo{1, "", "A100", 40960}},
      {0, TaskInfo{0, 0, 100}},
      {0, TaskInfo{1, 1, 101}},
      {1, GpuSample{0, 80, 20000, 200}},
      {1, GpuSample{1, 0, 500, std::nullopt}},
      {1, CpuSample{0, 100}},
      {1, CpuSample{1, 50}},
      {1, NetSample{"eth0", false, 1 << 20, 2 << 20}},
      {2, GpuSample{0, 100, 30000, 300}},
      {2, GpuSample{1, 4, 500, std::nullopt}},
      {2, CpuSample{0, 200}},
      {2, CpuSample{1, 50}},
      {2, NetSample{"eth0", false, 5 << 20, 3 << 20}},
      {2.5, NetSample{"mlx5_0:1", true, 1 << 30, 1 << 30}},
      {2.5, Note{"NVML said something"}},
      {3, EndRecord{"step-ended"}},
  };
}

}  // namespace

TEST(MonitorSummary, MeansPeaksAndIdleGpus) {
  const NodeSummary n = node_of(two_gpus_one_idle());
  ASSERT_EQ(n.gpus.size(), 2u);
  EXPECT_DOUBLE_EQ(*n.gpus[0].util_mean(), 90);
  EXPECT_DOUBLE_EQ(n.gpus[0].util_peak, 100);
  EXPECT_DOUBLE_EQ(*n.gpus[0].mem_peak_mib, 30000);
  EXPECT_DOUBLE_EQ(*n.gpus[0].power_mean(), 250);
  EXPECT_FALSE(n.gpus[0].idle());
  EXPECT_DOUBLE_EQ(*n.gpus[1].util_mean(), 2);
  EXPECT_FALSE(n.gpus[1].power_mean());
  EXPECT_TRUE(n.gpus[1].idle());
  ASSERT_EQ(n.idle_gpus().size(), 1u);
  EXPECT_EQ(n.idle_gpus()[0]->info.gpu, 1u);
  EXPECT_DOUBLE_EQ(*n.tasks[0].cpu_mean(), 150);
  EXPECT_DOUBLE_EQ(n.tasks[0].cpu_peak, 200);
  ASSERT_EQ(n.nics.size(), 2u);
  EXPECT_EQ(n.nics[0].rx_bytes, 5u << 20);
  EXPECT_DOUBLE_EQ(n.nics[0].rx_peak, 4 << 20);  // 4 MiB in the second between t=1 and t=2
  EXPECT_DOUBLE_EQ(n.nics[0].tx_peak, 2 << 20);  // 2 MiB in the first second, from TIME 0
  EXPECT_DOUBLE_EQ(n.nics[1].rx_peak, (1 << 30) / 2.5);
  EXPECT_EQ(n.samples, 3u);                // t = 1, 2, 2.5
  EXPECT_DOUBLE_EQ(n.duration, 3);
  EXPECT_EQ(n.end_reason, "step-ended");
}

TEST(MonitorSummary, AGpuThatWasNeverSampledIsNotCalledIdle) {
  const NodeSummary n = node_of({{0, GpuInfo{0, "", "x", 1}}});
  EXPECT_FALSE(n.gpus[0].idle());
  EXPECT_FALSE(n.gpus[0].util_mean());
}

TEST(MonitorSummary, ACounterResetIsNoNegativeRate) {
  const NodeSummary n = node_of({{1, NetSample{"eth0", false, 100, 100}},
                                 {2, NetSample{"eth0", false, 10, 10}},
                                 {3, NetSample{"eth0", false, 20, 30}}});
  // The reset (t=2) gives no rate; after it, 10 and 20 bytes a second are below the first.
  EXPECT_DOUBLE_EQ(n.nics[0].rx_peak, 100);  // the first second, from TIME 0
  EXPECT_DOUBLE_EQ(n.nics[0].tx_peak, 100);
}

TEST(MonitorSummary, TheTextShowsEveryTableAndFlagsTheIdleGpu) {
  NodeSummary n = node_of(two_gpus_one_idle());
  n.file = "/home/u/ddp-monitor-17.0-n1.txt";
  EXPECT_EQ(format_summary(n),
            "ddp-monitor: node n1 (1 of 2), job 17 step 0: 3.0 s, 3 samples every 1 s\n"
            "  file /home/u/ddp-monitor-17.0-n1.txt\n"
            "  GPU  BUS ID        NAME  UTIL MEAN  PEAK       MEMORY PEAK  POWER MEAN   PEAK\n"
            "  0    0000:3b:00.0  A100        90%  100%  29.3 of 40.0 GiB       250 W  300 W\n"
            "  1    -             A100         2%    4%   0.5 of 40.0 GiB           -      -  IDLE\n"
            "  RANK  PID  CPU MEAN  PEAK\n"
            "  0     100      150%  200%\n"
            "  1     101       50%   50%\n"
            "  NIC            RECEIVED     SENT      PEAK IN     PEAK OUT\n"
            "  eth0            5.0 MiB  3.0 MiB    4.0 MiB/s    2.0 MiB/s\n"
            "  mlx5_0:1 (IB)   1.0 GiB  1.0 GiB  409.6 MiB/s  409.6 MiB/s\n"
            "  idle: GPU 1 averaged 2% utilisation (below 5%): no rank drove it; check that every "
            "rank uses cuda:LOCAL_RANK, or ask for fewer GPUs\n"
            "  note: NVML said something\n");
}

TEST(MonitorSummary, AFileCutShortIsSaid) {
  const NodeSummary n = node_of({{0, StartRecord{1, 0, "n1", 0, 1, 10, 0}}, {10, CpuSample{0, 1}}});
  EXPECT_NE(format_summary(n).find("10.0 s, 1 sample every 10 s (the file ends early"),
            std::string::npos)
      << format_summary(n);
}

TEST(MonitorSummary, BytesInBinaryUnits) {
  EXPECT_EQ(format_bytes(0), "0 B");
  EXPECT_EQ(format_bytes(1023), "1023 B");
  EXPECT_EQ(format_bytes(1536), "1.5 KiB");
  EXPECT_EQ(format_bytes(3.5 * (1ull << 40)), "3.5 TiB");
}
