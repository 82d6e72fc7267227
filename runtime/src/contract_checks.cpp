#include <string_view>

#include "contract_read.hpp"
#include "names.hpp"
#include "parse.hpp"

namespace ddp::detail {

void check_master_addr(const EnvReader& env, const std::string& name, const std::string& value) {
  if (value.empty())
    env.fail(name + " is empty; give the host name or IP address rank 0 listens on, e.g. n001 "
                    "or 10.0.0.1.");
  for (char ch : value) {
    const auto u = static_cast<unsigned char>(ch);
    if (u <= ' ' || u == 0x7f)
      env.fail(name + "=" + plan::quoted(value) +
               " contains a space or control character; give one host name or IP address, "
               "e.g. n001 or 10.0.0.1.");
  }
  // Host names are letters, digits, '-', '_' and '.'; IPv6 addresses add ':', '%' (the zone) and
  // brackets. Anything else (';', '$', quotes...) names no host rank 0 could listen on.
  for (char ch : value) {
    if (!plan::address_char(ch))
      env.fail(name + "=" + plan::quoted(value) + " contains " + plan::quoted(std::string(1, ch)) +
               ", which no host name or IP address holds; give one host name or IP address, "
               "e.g. n001 or 10.0.0.1.");
  }
}

std::uint16_t read_port(const EnvReader& env, const std::string& name) {
  return static_cast<std::uint16_t>(env.parse(name, env.require(name), 1, 65535));
}

void check_consistent(const EnvReader& env, const RawContract& c) {
  env.check_at_most(c.local_world_size, c.world_size,
                    "a node cannot run more ranks than the whole job");
  env.check_at_most(c.nodes, c.world_size, "every node runs at least one rank");
  env.check_below(c.rank, c.world_size, "ranks");
  env.check_below(c.local_rank, c.local_world_size, "local ranks");
  env.check_below(c.node_rank, c.nodes, "node indices");
}

}  // namespace ddp::detail
