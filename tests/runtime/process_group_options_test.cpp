// ProcessGroup::create reads its DDP_*_TIMEOUT overrides through the same EnvLookup as the
// Context, so a test (or a program) can give them without touching the process's environment.
// A bad value fails before any rendezvous, so these tests need no peers and no network.
#include <gtest/gtest.h>

#include "ddp/env_contract.hpp"
#include "ddp/process_group.hpp"
#include "env_map.hpp"

namespace {

using ddp::test::EnvMap;

std::string create_error(const EnvMap& env) {
  ddp::Context single;  // rank 0 of 1
  ddp::ProcessGroupOptions options;
  options.env = env.lookup();
  try {
    ddp::ProcessGroup::create(single, options);
  } catch (const ddp::Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "ProcessGroup::create accepted a bad time-out";
  return "";
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST(ProcessGroupOptions, TimeOutsComeFromTheGivenLookup) {
  namespace c = ddp::contract;
  EXPECT_TRUE(has(create_error(EnvMap().set(c::kDdpTimeout, "soon")),
                  "DDP_TIMEOUT='soon' is not a time-out; give seconds, e.g. 300"));
  EXPECT_TRUE(has(create_error(EnvMap().set(c::kDdpRendezvousTimeout, "0")),
                  "DDP_RENDEZVOUS_TIMEOUT='0' is not a time-out"));
  EXPECT_TRUE(has(create_error(EnvMap().set(c::kDdpPeerTimeout, "-1")),
                  "DDP_PEER_TIMEOUT='-1' is not a time-out; give seconds, e.g. 300 (0: off)"));
}
