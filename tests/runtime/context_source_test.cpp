// Which launcher's variables a Context comes from, and what it reads from each.
#include <gtest/gtest.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>

#include "ddp/context.hpp"
#include "ddp/env_contract.hpp"
#include "env_map.hpp"

using ddp::Context;
using ddp::ContractSource;
using ddp::test::EnvMap;
using ddp::test::error_of;
using ddp::test::has;

TEST(ContextPlugin, ReadsEverythingThePluginWrites) {
  const Context c = ddp::test::plugin_env().read();
  EXPECT_EQ(c.source, ContractSource::Plugin);
  EXPECT_EQ(c.rank, 3);
  EXPECT_EQ(c.local_rank, 1);
  EXPECT_EQ(c.world_size, 8);
  EXPECT_EQ(c.local_world_size, 2);
  EXPECT_EQ(c.node_rank, 1);
  EXPECT_EQ(c.nodes, 4);
  EXPECT_EQ(c.master_addr, "n1");
  EXPECT_EQ(c.master_port, 24567);
  EXPECT_EQ(c.backend, ddp::contract::Backend::Gloo);
  EXPECT_EQ(c.hostname_hint, "n2");
  EXPECT_FALSE(c.gloo_ifname);
  EXPECT_FALSE(c.is_main());
}

TEST(ContextPlugin, ReadsWhatTheContractHeaderWrites) {
  ddp::contract::TaskContract t;
  t.rank = 6;
  t.local_rank = 2;
  t.world_size = 12;
  t.local_world_size = 4;
  t.node_rank = 1;
  t.nodes = 3;
  t.master_addr = "gn008-ib";
  t.master_port = 21234;
  t.backend = ddp::contract::Backend::Nccl;
  EnvMap env;
  env.set(ddp::contract::kDdpLauncher, "spank_ddp 0.1.0");
  for (const auto& [name, value] : t.to_env()) env.set(name, value);
  const Context c = env.read();
  EXPECT_EQ(c.rank, 6);
  EXPECT_EQ(c.local_rank, 2);
  EXPECT_EQ(c.world_size, 12);
  EXPECT_EQ(c.local_world_size, 4);
  EXPECT_EQ(c.node_rank, 1);
  EXPECT_EQ(c.nodes, 3);
  EXPECT_EQ(c.master_addr, "gn008-ib");
  EXPECT_EQ(c.master_port, 21234);
  EXPECT_EQ(c.backend, ddp::contract::Backend::Nccl);
}

TEST(ContextPlugin, EveryVariableItWritesIsRequired) {
  for (const char* name : {"RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "DDP_NODES",
                           "MASTER_ADDR", "MASTER_PORT"}) {
    const std::string msg = error_of(ddp::test::plugin_env().unset(name));
    EXPECT_TRUE(has(msg, "spank_ddp contract: " + std::string(name) + " is not set")) << msg;
    EXPECT_TRUE(has(msg, "unset DDP_LAUNCHER")) << msg;
  }
}

TEST(ContextPlugin, NodeRankFromGroupRankOrNodeRank) {
  EXPECT_EQ(ddp::test::plugin_env().unset("GROUP_RANK").read().node_rank, 1);
  EXPECT_EQ(ddp::test::plugin_env().unset("NODE_RANK").read().node_rank, 1);
  const std::string msg = error_of(ddp::test::plugin_env().unset("GROUP_RANK").unset("NODE_RANK"));
  EXPECT_TRUE(has(msg, "GROUP_RANK or NODE_RANK is not set")) << msg;
}

TEST(ContextPlugin, TorchrunStartedInsideThePluginStepWins) {
  // srun --ddp --ntasks-per-node=1 torchrun --nproc-per-node=4: torchrun rewrote the ranks.
  EnvMap env = ddp::test::plugin_env();
  for (const auto& [name, value] : ddp::test::torchrun_env().vars) env.set(name, value);
  const Context c = env.read();
  EXPECT_EQ(c.source, ContractSource::Torchrun);
  EXPECT_EQ(c.rank, 5);
  EXPECT_EQ(c.local_world_size, 4);
  EXPECT_EQ(c.nodes, 2);
  EXPECT_EQ(c.backend, ddp::contract::Backend::Gloo);  // the plugin's decision still applies
}

TEST(ContextTorchrun, ReadsTorchrunsVariables) {
  const Context c = ddp::test::torchrun_env().read();
  EXPECT_EQ(c.source, ContractSource::Torchrun);
  EXPECT_EQ(c.rank, 5);
  EXPECT_EQ(c.local_rank, 1);
  EXPECT_EQ(c.world_size, 8);
  EXPECT_EQ(c.local_world_size, 4);
  EXPECT_EQ(c.node_rank, 1);
  EXPECT_EQ(c.nodes, 2);
  EXPECT_EQ(c.master_addr, "10.0.0.1");
  EXPECT_EQ(c.master_port, 29500);
  EXPECT_FALSE(c.backend);
}

TEST(ContextTorchrun, RankAloneMarksTorchrunsContract) {
  // Other torchrun-compatible launchers do not set torchrun's marker.
  EXPECT_EQ(ddp::test::torchrun_env().unset("TORCHELASTIC_RUN_ID").read().source,
            ContractSource::Torchrun);
}

TEST(ContextTorchrun, RequiredVariables) {
  for (const char* name : {"RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"}) {
    const std::string msg = error_of(ddp::test::torchrun_env().unset(name));
    EXPECT_TRUE(has(msg, "torchrun contract: " + std::string(name) + " is not set")) << msg;
    EXPECT_TRUE(has(msg, "Launch with torchrun")) << msg;
  }
}

TEST(ContextTorchrun, GroupRankFallsBackToNodeRankThenToRankOverLocalWorldSize) {
  EnvMap env = ddp::test::torchrun_env().unset("GROUP_RANK").set("NODE_RANK", "1");
  EXPECT_EQ(env.read().node_rank, 1);
  env.unset("NODE_RANK");
  EXPECT_EQ(env.read().node_rank, 1);  // 5 / 4
}

TEST(ContextTorchrun, LocalWorldSizeFallsBackToWorldOverGroups) {
  const Context c = ddp::test::torchrun_env().unset("LOCAL_WORLD_SIZE").read();
  EXPECT_EQ(c.local_world_size, 4);
  EXPECT_EQ(c.nodes, 2);
  const std::string msg = error_of(ddp::test::torchrun_env()
                                       .unset("LOCAL_WORLD_SIZE")
                                       .set("WORLD_SIZE", "7"));
  EXPECT_TRUE(has(msg, "LOCAL_WORLD_SIZE is not set")) << msg;
  EXPECT_TRUE(has(msg, "WORLD_SIZE=7 does not split evenly over GROUP_WORLD_SIZE=2")) << msg;
}

TEST(ContextTorchrun, NodesFallBackToWorldOverLocalWorldSizeRoundedUp) {
  const Context c = ddp::test::torchrun_env().unset("GROUP_WORLD_SIZE").set("WORLD_SIZE", "7")
                        .read();
  EXPECT_EQ(c.nodes, 2);
}

TEST(ContextTorchrun, WithNeitherLocalWorldSizeNorGroupsItIsOneNode) {
  const Context c = ddp::test::torchrun_env()
                        .unset("LOCAL_WORLD_SIZE").unset("GROUP_WORLD_SIZE").unset("GROUP_RANK")
                        .set("LOCAL_RANK", "5").read();
  EXPECT_EQ(c.local_world_size, 8);
  EXPECT_EQ(c.nodes, 1);
  EXPECT_EQ(c.node_rank, 0);
  // A node rank of 1 then contradicts it, and the message says how the count was derived.
  const std::string msg = error_of(ddp::test::torchrun_env()
                                       .unset("LOCAL_WORLD_SIZE").unset("GROUP_WORLD_SIZE"));
  EXPECT_TRUE(has(msg, "GROUP_RANK=1 is not below GROUP_WORLD_SIZE=1 (unset; taken as")) << msg;
}

TEST(ContextSource, NoLauncherIsAnErrorThatSaysHowToLaunch) {
  const std::string msg = error_of(EnvMap{});
  EXPECT_TRUE(has(msg, "no launcher contract found")) << msg;
  EXPECT_TRUE(has(msg, "srun --ddp")) << msg;
  EXPECT_TRUE(has(msg, "torchrun")) << msg;
  EXPECT_TRUE(has(msg, "srun ./program")) << msg;
  // MASTER_ADDR or WORLD_SIZE exported by a batch script are no contract on their own.
  EXPECT_TRUE(has(error_of(EnvMap{}.set("MASTER_ADDR", "n1").set("WORLD_SIZE", "4")),
                  "no launcher contract found"));
}

TEST(ContextSource, Names) {
  EXPECT_STREQ(ddp::contract_source_name(ContractSource::Plugin), "spank_ddp");
  EXPECT_STREQ(ddp::contract_source_name(ContractSource::Torchrun), "torchrun");
  EXPECT_STREQ(ddp::contract_source_name(ContractSource::Slurm), "slurm");
}

TEST(ContextSource, HostnameHintFallsBackToGethostname) {
  char buf[HOST_NAME_MAX + 1] = {};
  ASSERT_EQ(::gethostname(buf, sizeof buf - 1), 0);
  EXPECT_EQ(ddp::test::torchrun_env().read().hostname_hint, std::string(buf));
  EXPECT_EQ(ddp::test::torchrun_env().set("SLURMD_NODENAME", "gn007").read().hostname_hint,
            "gn007");
}

TEST(ContextSource, ReadsTheProcessEnvironment) {
  const auto env = ddp::test::torchrun_env();
  std::map<std::string, std::optional<std::string>> saved;
  for (const auto& [name, value] : env.vars) {
    const char* old = std::getenv(name.c_str());
    saved[name] = old ? std::optional<std::string>(old) : std::nullopt;
    ::setenv(name.c_str(), value.c_str(), 1);
  }
  const Context c = Context::from_environment();
  for (const auto& [name, old] : saved) {
    if (old)
      ::setenv(name.c_str(), old->c_str(), 1);
    else
      ::unsetenv(name.c_str());
  }
  EXPECT_EQ(c.rank, 5);
  EXPECT_EQ(c.master_port, 29500);
}

TEST(ContextDescribe, OneLineForTheJobLog) {
  Context c;
  c.rank = 3;
  c.world_size = 8;
  c.local_rank = 1;
  c.local_world_size = 4;
  c.node_rank = 1;
  c.nodes = 2;
  c.master_addr = "n1";
  c.master_port = 24567;
  c.source = ContractSource::Plugin;
  EXPECT_EQ(c.describe(), "rank 3/8 (local 1/4, node 1/2) master n1:24567 via spank_ddp");
  c.master_addr = "fe80::1";
  c.source = ContractSource::Slurm;
  EXPECT_EQ(c.describe(), "rank 3/8 (local 1/4, node 1/2) master [fe80::1]:24567 via slurm");
}
