// Bytes through the step's NICs. Interfaces from /proc/net/dev, which shows the network
// namespace of the reader (/sys/class/net shows the one that mounted sysfs, which inside a
// container or the test cluster's nodes is another); the same kernel counters as
// /sys/class/net/IF/statistics/{rx,tx}_bytes. InfiniBand ports from their sysfs port counters.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace ddp::monitor {

struct ByteCounts {
  std::uint64_t rx = 0;
  std::uint64_t tx = 0;
};

// Interface -> its received and sent bytes, from /proc/net/dev's text.
std::map<std::string, ByteCounts> parse_proc_net_dev(std::string_view text);
std::map<std::string, ByteCounts> read_proc_net_dev(const std::string& proc_root);

// SYS/class/infiniband/HCA/ports/PORT/counters/port_{rcv,xmit}_data for "HCA:PORT" (PORT 1 when
// left out), in bytes: the counters count 4-byte words. nullopt where the files do not exist.
std::optional<ByteCounts> read_ib_port(const std::string& sys_root, const std::string& hca_port);

}  // namespace ddp::monitor
