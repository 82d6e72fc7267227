// Slurm host lists (SLURM_STEP_NODELIST, a profile's match and nodes), through libslurm's parser,
// and the contract's first_host, which reads the first host without libslurm.
#include "error.hpp"
#include "fuzz_util.hpp"
#include "hostlist.hpp"
#include "node_list.hpp"

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
  // The contract's first_host (no libslurm) accepts exactly the lists libslurm expands here, and
  // names the same first host.
  bool first_ok = false;
  try {
    const std::string first = p::first_host("list", in);
    first_ok = true;
    FUZZ_CHECK(!first.empty());
    for (char c : first)
      FUZZ_CHECK(c != '[' && c != ']' && c != ',' && static_cast<unsigned char>(c) > ' ');
    if (expanded) FUZZ_CHECK(first == hosts.front());
    if (expanded) FUZZ_CHECK(p::count_hosts("list", in) == hosts.size());
  } catch (const p::PlanError&) {
  }
  FUZZ_CHECK(first_ok == expanded);
  return 0;
}
