// The environment contract a training process reads at start-up (spank_ddp's, torchrun's or plain
// Slurm's variables). Input: NAME=VALUE lines; the first '=' splits, a later line for the same
// name wins, lines without '=' are ignored.
#include <map>

#include "ddp/context.hpp"
#include "ddp/error.hpp"
#include "fuzz_util.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::map<std::string, std::string> vars;
  for (const std::string& line : fuzz::split(fuzz::text(data, size), '\n')) {
    const std::size_t eq = line.find('=');
    if (eq != std::string::npos) vars[line.substr(0, eq)] = line.substr(eq + 1);
  }
  const ddp::EnvLookup lookup = [&vars](const std::string& name) -> std::optional<std::string> {
    const auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
  ddp::Context c;
  try {
    c = ddp::Context::from_environment(lookup);
  } catch (const ddp::Error& e) {
    return 0;
  }
  FUZZ_CHECK(c.world_size >= 1 && c.rank >= 0 && c.rank < c.world_size);
  FUZZ_CHECK(c.local_world_size >= 1 && c.local_world_size <= c.world_size);
  FUZZ_CHECK(c.local_rank >= 0 && c.local_rank < c.local_world_size);
  FUZZ_CHECK(c.nodes >= 1 && c.nodes <= c.world_size);
  FUZZ_CHECK(c.node_rank >= 0 && c.node_rank < c.nodes);
  FUZZ_CHECK(!c.master_addr.empty() && c.master_port >= 1);
  for (char ch : c.master_addr) FUZZ_CHECK(static_cast<unsigned char>(ch) > ' ' && ch != 0x7f);
  (void)c.describe();
  return 0;
}
