// CPU lists: cgroup cpuset files, Cpus_allowed_list, ddp-plan --cpus-allowed, read by the one
// list parser and written back by format_cpu_list.
#include <algorithm>

#include "error.hpp"
#include "fuzz_util.hpp"
#include "limits.hpp"
#include "parse.hpp"
#include "topology.hpp"

namespace p = ddp::plan;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string in = fuzz::text(data, size);
  p::CpuList cpus;
  try {
    cpus = p::parse_index_list("cpuset.cpus", in, p::kMaxCpuId);
  } catch (const p::PlanError&) {
    return 0;
  }
  std::sort(cpus.begin(), cpus.end());
  FUZZ_CHECK(std::adjacent_find(cpus.begin(), cpus.end()) == cpus.end());
  // format_cpu_list writes what parse_index_list reads.
  const std::string text = p::format_cpu_list(cpus);
  FUZZ_CHECK(p::parse_index_list("again", text, p::kMaxCpuId) == cpus);
  FUZZ_CHECK(text.size() <= in.size() + 1);
  return 0;
}
