// The limits on what a step may ask for, shared by the --ddp-* options, ddp-plan, the runtime's
// readers and configs/cli_filter.lua (tests/contract/lua_limits_test.cpp compares them).
#pragma once

namespace ddp::plan {

// Limits for counts: far beyond any real machine, small enough that products cannot overflow.
inline constexpr unsigned kMaxNodes = 100000;
inline constexpr unsigned kMaxGpusPerNode = 64;

}  // namespace ddp::plan
