#include "net_facts.hpp"

#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>

#include <fstream>
#include <sstream>

namespace ddp::plan {

const NetInterface* NetFacts::find(const std::string& name) const {
  for (const auto& i : interfaces)
    if (i.name == name) return &i;
  return nullptr;
}

bool NetFacts::usable(const std::string& name) const {
  const NetInterface* i = find(name);
  return i && i->up && i->has_ipv4 && !i->loopback;
}

std::optional<std::string> parse_default_route(const std::string& proc_net_route) {
  std::istringstream in(proc_net_route);
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string iface, destination, gateway, flags, refcnt, use, metric, mask;
    if (!(fields >> iface >> destination >> gateway >> flags >> refcnt >> use >> metric >> mask))
      continue;
    if (destination == "00000000" && mask == "00000000") return iface;
  }
  return std::nullopt;
}

NetFacts read_net_facts() {
  NetFacts facts;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) == 0) {
    for (ifaddrs* a = list; a; a = a->ifa_next) {
      if (!a->ifa_name) continue;
      NetInterface* known = nullptr;
      for (auto& i : facts.interfaces)
        if (i.name == a->ifa_name) known = &i;
      if (!known) {
        facts.interfaces.push_back({a->ifa_name, false, false, false});
        known = &facts.interfaces.back();
      }
      known->up = (a->ifa_flags & IFF_UP) && (a->ifa_flags & IFF_RUNNING);
      known->loopback = (a->ifa_flags & IFF_LOOPBACK) != 0;
      if (a->ifa_addr && a->ifa_addr->sa_family == AF_INET) known->has_ipv4 = true;
    }
    freeifaddrs(list);
  }
  std::ifstream route("/proc/net/route");
  std::stringstream text;
  text << route.rdbuf();
  facts.default_route = parse_default_route(text.str());
  return facts;
}

}  // namespace ddp::plan
