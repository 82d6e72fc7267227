// Slurm host lists ("n[01-04],gpu-a7") expanded with libslurm's own parser, so that padding,
// dashed names and nested ranges mean exactly what they mean to Slurm.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ddp::plan {

// The most hosts one list may name: far more nodes than any cluster has, few enough that a
// profile's lists cannot take slurmstepd's memory (Slurm itself writes at most 65536 per range).
inline constexpr std::uint64_t kMaxHosts = 1 << 17;

// Throws PlanError when the list is empty, malformed or names more than kMaxHosts hosts. `what`
// names its source for the message.
std::vector<std::string> expand_hostlist(std::string_view what, std::string_view list);

// The first host only, without expanding a 10,000-node list in full.
std::string first_host(std::string_view what, std::string_view list);

}  // namespace ddp::plan
