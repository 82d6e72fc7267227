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

// The same checks without expanding the list, and the number of hosts it names: a few bytes of
// text can name 131,072 hosts of thousands of characters each, so profiles keep lists as text.
std::uint64_t check_hostlist(std::string_view what, std::string_view list);

// Whether `host` is one of the list's hosts (a list check_hostlist accepted), without expanding it.
bool hostlist_contains(std::string_view list, std::string_view host);

}  // namespace ddp::plan
