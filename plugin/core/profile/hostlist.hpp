// Slurm host lists ("n[01-04],gpu-a7") expanded with libslurm's own parser, so that padding,
// dashed names and nested ranges mean exactly what they mean to Slurm.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "node_list.hpp"  // the syntax check, kMaxHosts and first_host: the contract's

namespace ddp::plan {

// Throws PlanError when the list is empty, malformed or names more than kMaxHosts hosts. `what`
// names its source for the message.
std::vector<std::string> expand_hostlist(std::string_view what, std::string_view list);

}  // namespace ddp::plan
