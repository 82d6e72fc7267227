// One reader per launcher. Each returns the launcher's answer with every number tied to the
// variable it came from; context.cpp checks that the answers agree and builds the Context.
#pragma once

#include <cstdint>
#include <string>

#include "ddp/context.hpp"
#include "env_reader.hpp"

namespace ddp::detail {

// Far beyond any real job, small enough that int arithmetic on ranks cannot overflow.
inline constexpr unsigned kMaxWorldSize = 1u << 24;

struct RawContract {
  ContractSource source = ContractSource::Torchrun;
  Named rank, local_rank, world_size, local_world_size, node_rank, nodes;
  std::string master_addr;
  std::uint16_t master_port = 0;
};

// The reader for each launcher, with the fixes its messages suggest.
EnvReader plugin_reader(const EnvLookup& env);
EnvReader torchrun_reader(const EnvLookup& env);
EnvReader slurm_reader(const EnvLookup& env);

RawContract read_plugin(const EnvReader& env);    // contract_torchrun.cpp: the same names
RawContract read_torchrun(const EnvReader& env);  // contract_torchrun.cpp
RawContract read_slurm(const EnvReader& env);     // contract_slurm.cpp

// contract_checks.cpp: the rules every launcher's answer must pass.

// A host name or address rank 0 listens on: not empty, only the characters of host names and
// IP addresses (no spaces, control characters or shell metacharacters).
void check_master_addr(const EnvReader& env, const std::string& name, const std::string& value);
// A TCP port, 1..65535.
std::uint16_t read_port(const EnvReader& env, const std::string& name);
// Ranks below their counts, and counts that fit inside each other.
void check_consistent(const EnvReader& env, const RawContract& contract);

}  // namespace ddp::detail
