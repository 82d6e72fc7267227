// Strict parsing of the numbers and lists that users and admins type. Strict means: no sign, no
// spaces, no trailing junk, no overflow; "2x" or "-1" or "99999999999" is an error, never a 0.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ddp::plan {

// Parses a decimal unsigned integer in [min, max]. `what` names the option or variable for the
// error message, e.g. "--ddp-nodes".
std::uint64_t parse_unsigned(std::string_view what, std::string_view text, std::uint64_t min,
                             std::uint64_t max);

// The one parser of index lists: GPU lists (SLURM_STEP_GPUS, CUDA_VISIBLE_DEVICES), Slurm's core
// ids (S_STEP_ALLOC_CORES), CPU lists (cgroup cpuset files, Cpus_allowed_list, the node facts
// file, ddp-plan's options). "0,1,3", "0-3", "0-1,4": indices and low-high ranges separated by
// commas, expanded in the order written; each index at most max_index. One trailing newline or
// run of blanks is ignored, as /sys and /proc files end with one; "" and "\n" are the empty list.
// No strides ("0-15:2"): Slurm writes lists with bit_fmt or "%d," and the kernel with %*pbl, and
// neither writes one. Anything else, an index listed twice included (a GPU listed twice would
// give two ranks one device), throws PlanError naming `what`, the text and what is wrong in it.
std::vector<unsigned> parse_index_list(std::string_view what, std::string_view text,
                                       unsigned max_index);

std::string join(const std::vector<unsigned>& values, const char* sep = ",");

// The other way: "0-3,8,10-11", sorted, each value once; runs of two or more become ranges, as the
// kernel writes CPU lists (Cpus_allowed_list) and as messages name a node's ranks.
std::string format_index_list(std::vector<unsigned> values);

// Text safe to put in an error message: printable ASCII kept, the rest escaped, long input cut.
std::string quoted(std::string_view text);

// Whether `text` begins with `prefix` (std::string's own starts_with is C++20).
inline bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

}  // namespace ddp::plan
