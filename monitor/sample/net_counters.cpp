#include "net_counters.hpp"

#include <fstream>
#include <sstream>

namespace ddp::monitor {
namespace {

std::optional<std::uint64_t> read_number(const std::string& path) {
  std::ifstream in(path);
  std::uint64_t v = 0;
  if (!(in >> v)) return std::nullopt;
  return v;
}

}  // namespace

std::map<std::string, ByteCounts> parse_proc_net_dev(std::string_view text) {
  // Two heading lines, then "  IFACE: rx_bytes rx_packets ... (8 fields) tx_bytes ...".
  std::map<std::string, ByteCounts> out;
  std::istringstream in{std::string(text)};
  std::string line;
  while (std::getline(in, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string name = line.substr(0, colon);
    name.erase(0, name.find_first_not_of(' '));
    std::istringstream fields(line.substr(colon + 1));
    std::uint64_t v[9] = {};
    bool ok = true;
    for (auto& x : v) ok = ok && static_cast<bool>(fields >> x);
    if (!ok || name.empty()) continue;
    out[name] = {v[0], v[8]};
  }
  return out;
}

std::map<std::string, ByteCounts> read_proc_net_dev(const std::string& proc_root) {
  std::ifstream in(proc_root + "/net/dev");
  std::stringstream text;
  text << in.rdbuf();
  return parse_proc_net_dev(text.str());
}

std::optional<ByteCounts> read_ib_port(const std::string& sys_root, const std::string& hca_port) {
  const auto colon = hca_port.find(':');
  const std::string hca = hca_port.substr(0, colon);
  const std::string port = colon == std::string::npos ? "1" : hca_port.substr(colon + 1);
  const std::string dir =
      sys_root + "/class/infiniband/" + hca + "/ports/" + port + "/counters/";
  const auto rx = read_number(dir + "port_rcv_data");
  const auto tx = read_number(dir + "port_xmit_data");
  if (!rx || !tx) return std::nullopt;
  return ByteCounts{*rx * 4, *tx * 4};
}

}  // namespace ddp::monitor
