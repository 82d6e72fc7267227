// Slurm host lists (SLURM_STEP_NODELIST, a profile's match and nodes), through libslurm's parser.
#include "error.hpp"
#include "fuzz_util.hpp"
#include "hostlist.hpp"

namespace p = ddp::plan;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string in = fuzz::text(data, size);
  std::vector<std::string> hosts;
  bool expanded = false;
  try {
    hosts = p::expand_hostlist("list", in);
    expanded = true;
    FUZZ_CHECK(!hosts.empty());
    for (const std::string& h : hosts) {
      FUZZ_CHECK(!h.empty());
      for (char c : h)
        FUZZ_CHECK(c != '[' && c != ']' && c != ',' && static_cast<unsigned char>(c) > ' ');
    }
  } catch (const p::PlanError&) {
  }
  try {
    const std::string first = p::first_host("list", in);
    FUZZ_CHECK(!first.empty());
    if (expanded) FUZZ_CHECK(first == hosts.front());
  } catch (const p::PlanError&) {
  }
  return 0;
}
