// The node's network interfaces as the task's network namespace sees them (getifaddrs and
// /proc/net/route, not /sys/class/net, which shows the namespace that mounted sysfs).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace ddp::plan {

struct NetInterface {
  std::string name;
  bool up = false;        // IFF_UP and IFF_RUNNING
  bool loopback = false;
  bool has_ipv4 = false;
};

struct NetFacts {
  std::vector<NetInterface> interfaces;
  std::optional<std::string> default_route;  // interface of the IPv4 default route
  const NetInterface* find(const std::string& name) const;
  bool usable(const std::string& name) const;  // exists, up, has an IPv4 address
};

NetFacts read_net_facts();

// The interface of the default route in /proc/net/route's text, if any.
std::optional<std::string> parse_default_route(const std::string& proc_net_route);

}  // namespace ddp::plan
