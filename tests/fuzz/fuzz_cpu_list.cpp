// CPU lists: cgroup cpuset files, Cpus_allowed_list, ddp-plan --cpus-allowed.
#include <algorithm>

#include "error.hpp"
#include "fuzz_util.hpp"
#include "topology.hpp"

namespace p = ddp::plan;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string in = fuzz::text(data, size);
  p::CpuList cpus;
  try {
    cpus = p::parse_cpu_list("cpuset.cpus", in);
  } catch (const p::PlanError&) {
    return 0;
  }
  FUZZ_CHECK(std::is_sorted(cpus.begin(), cpus.end()));
  FUZZ_CHECK(std::adjacent_find(cpus.begin(), cpus.end()) == cpus.end());
  // format_cpu_list and parse_cpu_list are each other's inverse.
  const std::string text = p::format_cpu_list(cpus);
  FUZZ_CHECK(p::parse_cpu_list("again", text) == cpus);
  FUZZ_CHECK(text.size() <= in.size() + 1);
  return 0;
}
