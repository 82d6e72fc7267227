// GPU index lists (SLURM_STEP_GPUS, CUDA_VISIBLE_DEVICES, ddp-plan --gpus), with the bound the
// plugin uses, and the same text with a small bound.
#include <algorithm>

#include "error.hpp"
#include "fuzz_util.hpp"
#include "parse.hpp"

namespace p = ddp::plan;

namespace {

void check(const std::string& in, unsigned max_index) {
  std::vector<unsigned> v;
  try {
    v = p::parse_index_list("CUDA_VISIBLE_DEVICES", in, max_index);
  } catch (const p::PlanError&) {
    return;
  }
  std::vector<unsigned> sorted = v;
  std::sort(sorted.begin(), sorted.end());
  FUZZ_CHECK(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end());
  for (unsigned x : v) FUZZ_CHECK(x <= max_index);
  // join() writes what parse_index_list reads.
  FUZZ_CHECK(p::parse_index_list("again", p::join(v), max_index) == v);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string in = fuzz::text(data, size);
  check(in, 1u << 16);
  check(in, 7);
  // Also the unsigned parser alone, at its limits.
  try {
    const auto v = p::parse_unsigned("N", in, 1, UINT64_MAX);
    FUZZ_CHECK(v >= 1 && std::to_string(v).size() <= in.size());
  } catch (const p::PlanError&) {
  }
  return 0;
}
