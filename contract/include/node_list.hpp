// Slurm host lists ("n[01-04],gpu-a7") checked and read without libslurm, so that the runtime can
// find MASTER_ADDR in SLURM_STEP_NODELIST on a machine without Slurm's library. The plugin expands
// whole lists with libslurm (hostlist.hpp) after the same check.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace ddp::plan {

// The most hosts one list may name: far more nodes than any cluster has, few enough that a
// profile's lists cannot take slurmstepd's memory (Slurm itself writes at most 65536 per range).
inline constexpr std::uint64_t kMaxHosts = 1 << 17;

// How many hosts `list` names, checked in the syntax Slurm writes: names of letters, digits, '-',
// '_' and '.', each with any number of [ranges] (N or LOW-HIGH, low before high, at most 65536
// each) and no text after its last range, separated by ',' or ' '. Throws PlanError naming `what` when the list is empty,
// malformed or names more than kMaxHosts hosts.
std::uint64_t count_hosts(std::string_view what, std::string_view list);

// The first host, as libslurm would expand it ("nid[0012-0020],x" gives "nid0012"), without
// expanding the rest. The whole list is checked as count_hosts checks it.
std::string first_host(std::string_view what, std::string_view list);

// The most characters of a host list a message quotes: a fragmented allocation of 10,000 nodes is
// written in tens of kilobytes, which every message naming it would carry.
inline constexpr std::size_t kMaxQuotedList = 160;

// `list` as a message shows it: whole up to kMaxQuotedList characters, else cut after its last
// host or range that fits (a bracket cut open is closed), then how many hosts the whole names:
// "n[0001,0003,0005-0007],... (10000 hosts)". A list count_hosts refuses is cut without a count.
std::string quoted_list(std::string_view list);

}  // namespace ddp::plan
