// Every value a launcher hands over is checked, and the message names the variable.
#include <gtest/gtest.h>

#include "ddp/context.hpp"
#include "env_map.hpp"
#include "relay_rule.hpp"

using ddp::test::error_of;
using ddp::test::has;
using ddp::test::plugin_env;
using ddp::test::torchrun_env;

TEST(ContextValidation, NumbersMustBeWholeNumbers) {
  for (const char* name : {"RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK",
                           "GROUP_WORLD_SIZE"}) {
    for (const char* bad : {"abc", "-1", "2x", " 3", "1.5", "99999999999999999999"}) {
      const std::string msg = error_of(torchrun_env().set(name, bad));
      EXPECT_TRUE(has(msg, "torchrun contract: " + std::string(name) + "='")) << msg;
    }
  }
  EXPECT_TRUE(has(error_of(plugin_env().set("DDP_NODES", "four")), "DDP_NODES='four'"));
}

TEST(ContextValidation, EmptyNumberNeedsAValue) {
  const std::string msg = error_of(torchrun_env().set("RANK", ""));
  EXPECT_TRUE(has(msg, "RANK needs a value")) << msg;
}

TEST(ContextValidation, CountsStartAtOne) {
  const std::string msg = error_of(torchrun_env().set("WORLD_SIZE", "0"));
  EXPECT_TRUE(has(msg, "WORLD_SIZE='0' is out of range")) << msg;
}

TEST(ContextValidation, RankBelowWorldSize) {
  const std::string msg = error_of(torchrun_env().set("RANK", "8"));
  EXPECT_TRUE(has(msg, "RANK=8 is not below WORLD_SIZE=8: ranks run 0..7")) << msg;
}

TEST(ContextValidation, LocalRankBelowLocalWorldSize) {
  const std::string msg = error_of(torchrun_env().set("LOCAL_RANK", "4"));
  EXPECT_TRUE(has(msg, "LOCAL_RANK=4 is not below LOCAL_WORLD_SIZE=4: local ranks run 0..3"))
      << msg;
}

TEST(ContextValidation, NodeRankBelowNodes) {
  std::string msg = error_of(torchrun_env().set("GROUP_RANK", "2"));
  EXPECT_TRUE(has(msg, "GROUP_RANK=2 is not below GROUP_WORLD_SIZE=2")) << msg;
  msg = error_of(plugin_env().set("GROUP_RANK", "4"));
  EXPECT_TRUE(has(msg, "spank_ddp contract: GROUP_RANK=4 is not below DDP_NODES=4")) << msg;
  EXPECT_TRUE(has(msg, "something changed them after launch")) << msg;
}

TEST(ContextValidation, WorldSizeNotSmallerThanLocalWorldSize) {
  const std::string msg =
      error_of(torchrun_env().set("WORLD_SIZE", "2").set("RANK", "1").set("GROUP_WORLD_SIZE", "1")
                   .set("GROUP_RANK", "0"));
  EXPECT_TRUE(has(msg, "LOCAL_WORLD_SIZE=4 is larger than WORLD_SIZE=2")) << msg;
}

TEST(ContextValidation, NoMoreNodesThanRanks) {
  const std::string msg = error_of(plugin_env().set("DDP_NODES", "9"));
  EXPECT_TRUE(has(msg, "DDP_NODES=9 is larger than WORLD_SIZE=8")) << msg;
}

TEST(ContextValidation, MasterPortInOneTo65535) {
  for (const char* bad : {"0", "65536", "", "http", "-5"}) {
    const std::string msg = error_of(torchrun_env().set("MASTER_PORT", bad));
    EXPECT_TRUE(has(msg, "MASTER_PORT")) << msg;
    EXPECT_TRUE(has(msg, "1..65535")) << msg;
  }
  EXPECT_EQ(torchrun_env().set("MASTER_PORT", "65535").read().master_port, 65535);
  EXPECT_EQ(torchrun_env().set("MASTER_PORT", "1").read().master_port, 1);
}

TEST(ContextValidation, MasterAddrIsOneHost) {
  std::string msg = error_of(torchrun_env().set("MASTER_ADDR", ""));
  EXPECT_TRUE(has(msg, "MASTER_ADDR is empty")) << msg;
  for (const char* bad : {"n1 n2", "n1\t", " n1", "n1\n"}) {
    msg = error_of(torchrun_env().set("MASTER_ADDR", bad));
    EXPECT_TRUE(has(msg, "MASTER_ADDR='")) << msg;
    EXPECT_TRUE(has(msg, "contains a space or control character")) << msg;
  }
  EXPECT_EQ(torchrun_env().set("MASTER_ADDR", "fe80::1").read().master_addr, "fe80::1");
}

TEST(ContextValidation, BackendIsNcclOrGloo) {
  EXPECT_EQ(torchrun_env().set("DDP_BACKEND", "nccl").read().backend, ddp::contract::Backend::Nccl);
  EXPECT_FALSE(torchrun_env().set("DDP_BACKEND", "").read().backend);
  const std::string msg = error_of(plugin_env().set("DDP_BACKEND", "mpi"));
  EXPECT_TRUE(has(msg, "DDP_BACKEND='mpi' is not a backend; allowed: nccl, gloo")) << msg;
}

TEST(ContextValidation, GlooInterfaceNames) {
  EXPECT_EQ(torchrun_env().set("GLOO_SOCKET_IFNAME", "ib0").read().gloo_ifname, "ib0");
  EXPECT_EQ(torchrun_env().set("GLOO_SOCKET_IFNAME", "eth0,eth1").read().gloo_ifname,
            "eth0,eth1");
  EXPECT_FALSE(torchrun_env().set("GLOO_SOCKET_IFNAME", "").read().gloo_ifname);
  for (const char* bad : {"eth 0", "a,,b", "ib0,", "averyveryverylongname", "../x", "ib0;x", "..", "^ib"}) {
    const std::string msg = error_of(torchrun_env().set("GLOO_SOCKET_IFNAME", bad));
    EXPECT_TRUE(has(msg, "GLOO_SOCKET_IFNAME='")) << msg;
    EXPECT_TRUE(has(msg, "network interface names")) << msg;
  }
}

// Every rank of a job decides alike from what they share: relayed unless DDP_STORE_RELAY=0.
TEST(ContextValidation, StoreRelayIsAYesNoValueAndOnUnlessOff) {
  using ddp::detail::relayed;
  auto at = [](int world, const char* relay) {
    auto env = torchrun_env().set("WORLD_SIZE", std::to_string(world)).set("GROUP_WORLD_SIZE", std::to_string(world / 4));
    if (relay != nullptr) env.set("DDP_STORE_RELAY", relay);
    return env.read();
  };
  EXPECT_FALSE(at(8, nullptr).store_relay);
  EXPECT_TRUE(relayed(at(8, nullptr)));
  EXPECT_TRUE(relayed(at(8192, nullptr)));
  EXPECT_FALSE(relayed(at(8192, "0")));
  EXPECT_FALSE(relayed(at(8, "no")));
  EXPECT_TRUE(relayed(at(8, "1")));
  // A node of one rank has nobody to relay for.
  EXPECT_FALSE(relayed(torchrun_env().set("WORLD_SIZE", "2048").set("LOCAL_WORLD_SIZE", "1").set("LOCAL_RANK", "0")
                           .set("GROUP_WORLD_SIZE", "2048").set("DDP_STORE_RELAY", "1").read()));
  const std::string msg = error_of(torchrun_env().set("DDP_STORE_RELAY", "sometimes"));
  EXPECT_TRUE(has(msg, "DDP_STORE_RELAY='sometimes' is not a yes/no value")) << msg;
  EXPECT_TRUE(has(msg, "or unset it (relayed)")) << msg;
}
