// The limits on what a step may ask for, shared by the --ddp-* options, ddp-plan, the runtime's
// readers and configs/cli_filter.lua (tests/contract/lua_limits_test.cpp compares them).
#pragma once

namespace ddp::plan {

// Limits for counts: far beyond any real machine, small enough that products cannot overflow.
inline constexpr unsigned kMaxNodes = 100000;
inline constexpr unsigned kMaxGpusPerNode = 64;

// Bounds on the indices in lists (parse_index_list): what a typo like "0-4000000000" can make the
// parser allocate. CPUs: above every kernel's NR_CPUS (8192 today). GPUs: Slurm's index on a node.
inline constexpr unsigned kMaxCpuId = 65535;
inline constexpr unsigned kMaxGpuIndex = 1u << 16;

}  // namespace ddp::plan
