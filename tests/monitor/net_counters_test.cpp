// Network byte counters: /proc/net/dev's text, and InfiniBand port counters in 4-byte words.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "net_counters.hpp"

using namespace ddp::monitor;

TEST(MonitorNet, ProcNetDevGivesReceivedAndSentBytes) {
  const auto dev = parse_proc_net_dev(
      "Inter-|   Receive                                                |  Transmit\n"
      " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs "
      "drop fifo colls carrier compressed\n"
      "    lo:  123456     100    0    0    0     0          0         0   123456     100    0 "
      "   0    0     0       0          0\n"
      "  eth0:18446744073709551615 5 0 0 0 0 0 0 42 1 0 0 0 0 0 0\n"
      "broken: 1 2 3\n");
  ASSERT_EQ(dev.size(), 2u);
  EXPECT_EQ(dev.at("lo").rx, 123456u);
  EXPECT_EQ(dev.at("lo").tx, 123456u);
  EXPECT_EQ(dev.at("eth0").rx, 18446744073709551615u);
  EXPECT_EQ(dev.at("eth0").tx, 42u);
  EXPECT_EQ(read_proc_net_dev("/proc").count("lo"), 1u);  // this machine's own
}

TEST(MonitorNet, InfinibandPortCountersCountWords) {
  // The layout of /sys/class/infiniband on a node with an HCA (none on this machine).
  const auto root = std::filesystem::temp_directory_path() / ("ddp-ib-" + std::to_string(getpid()));
  const auto dir = root / "class/infiniband/mlx5_0/ports/1/counters";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "port_rcv_data") << "1000\n";
  std::ofstream(dir / "port_xmit_data") << "250\n";
  const auto c = read_ib_port(root.string(), "mlx5_0:1");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->rx, 4000u);
  EXPECT_EQ(c->tx, 1000u);
  EXPECT_TRUE(read_ib_port(root.string(), "mlx5_0"));  // port 1 when not given
  EXPECT_FALSE(read_ib_port(root.string(), "mlx5_0:2"));
  EXPECT_FALSE(read_ib_port(root.string(), "mlx5_9:1"));
  std::filesystem::remove_all(root);
}
