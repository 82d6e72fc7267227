// Plain srun: Slurm's task variables, and the rendezvous the plugin would have chosen.
#include <gtest/gtest.h>

#include "ddp/context.hpp"
#include "env_map.hpp"
#include "port.hpp"

using ddp::Context;
using ddp::ContractSource;
using ddp::test::error_of;
using ddp::test::has;
using ddp::test::slurm_env;

TEST(ContextSlurm, ReadsSrunsVariables) {
  const Context c = slurm_env().read();
  EXPECT_EQ(c.source, ContractSource::Slurm);
  EXPECT_EQ(c.rank, 4);
  EXPECT_EQ(c.local_rank, 1);
  EXPECT_EQ(c.world_size, 7);
  EXPECT_EQ(c.local_world_size, 3);
  EXPECT_EQ(c.node_rank, 1);
  EXPECT_EQ(c.nodes, 3);
  EXPECT_EQ(c.master_addr, "gn008");  // the step's first host, as the plugin picks it
  EXPECT_EQ(c.hostname_hint, "gn009");
}

TEST(ContextSlurm, DerivesThePortThePluginWould) {
  const ddp::plan::PortRange range;  // the plugin's default port_range
  EXPECT_EQ(slurm_env().read().master_port, ddp::plan::derive_port(4242, 0, range));
  EXPECT_EQ(slurm_env().set("SLURM_STEP_ID", "3").read().master_port,
            ddp::plan::derive_port(4242, 3, range));
}

TEST(ContextSlurm, ReservedPortWinsOverTheDerivedOne) {
  EXPECT_EQ(slurm_env().set("SLURM_STEP_RESV_PORTS", "12000-12003").read().master_port, 12000);
}

TEST(ContextSlurm, JobScriptsMasterAddrAndPortWin) {
  const Context c =
      slurm_env().set("MASTER_ADDR", "gn008-ib").set("MASTER_PORT", "29500").read();
  EXPECT_EQ(c.master_addr, "gn008-ib");
  EXPECT_EQ(c.master_port, 29500);
  EXPECT_TRUE(has(error_of(slurm_env().set("MASTER_PORT", "0")), "MASTER_PORT='0'"));
  EXPECT_TRUE(has(error_of(slurm_env().set("MASTER_ADDR", "a b")), "MASTER_ADDR='a b'"));
}

TEST(ContextSlurm, LastNodeGetsItsOwnTaskCount) {
  const Context c = slurm_env()
                        .set("SLURM_PROCID", "6").set("SLURM_LOCALID", "0")
                        .set("SLURM_NODEID", "2").read();
  EXPECT_EQ(c.local_world_size, 1);
  EXPECT_EQ(c.node_rank, 2);
}

TEST(ContextSlurm, FallsBackToTheJobsCounts) {
  const Context c = slurm_env()
                        .unset("SLURM_STEP_NUM_TASKS").unset("SLURM_STEP_NUM_NODES")
                        .unset("SLURM_STEP_TASKS_PER_NODE").read();
  EXPECT_EQ(c.world_size, 7);
  EXPECT_EQ(c.nodes, 3);
  EXPECT_EQ(c.local_world_size, 3);
}

TEST(ContextSlurm, TheBatchScriptItselfIsNotAStep) {
  const std::string msg = error_of(slurm_env().unset("SLURM_STEP_NODELIST"));
  EXPECT_TRUE(has(msg, "Slurm contract: SLURM_STEP_NODELIST is not set")) << msg;
  EXPECT_TRUE(has(msg, "batch script")) << msg;
  EXPECT_TRUE(has(msg, "srun")) << msg;
}

TEST(ContextSlurm, RequiredVariables) {
  for (const char* name : {"SLURM_LOCALID", "SLURM_NODEID", "SLURM_JOB_ID", "SLURM_STEP_ID"}) {
    const std::string msg = error_of(slurm_env().unset(name));
    EXPECT_TRUE(has(msg, "Slurm contract: " + std::string(name) + " is not set")) << msg;
  }
  std::string msg = error_of(slurm_env().unset("SLURM_STEP_NUM_TASKS").unset("SLURM_NTASKS"));
  EXPECT_TRUE(has(msg, "SLURM_STEP_NUM_TASKS or SLURM_NTASKS is not set")) << msg;
  msg = error_of(slurm_env().unset("SLURM_STEP_TASKS_PER_NODE").unset("SLURM_TASKS_PER_NODE"));
  EXPECT_TRUE(has(msg, "SLURM_STEP_TASKS_PER_NODE or SLURM_TASKS_PER_NODE is not set")) << msg;
}

TEST(ContextSlurm, TasksPerNodeMustMatchTheCounts) {
  std::string msg = error_of(slurm_env().set("SLURM_STEP_TASKS_PER_NODE", "3(x2)"));
  EXPECT_TRUE(has(msg, "SLURM_STEP_NUM_NODES=3 but SLURM_STEP_TASKS_PER_NODE='3(x2)' lists 2 "
                       "nodes")) << msg;
  msg = error_of(slurm_env().set("SLURM_STEP_TASKS_PER_NODE", "3(x2),2"));
  EXPECT_TRUE(has(msg, "SLURM_STEP_NUM_TASKS=7 but SLURM_STEP_TASKS_PER_NODE='3(x2),2' adds up "
                       "to 8 tasks")) << msg;
}

TEST(ContextSlurm, TasksPerNodeSyntax) {
  EXPECT_EQ(slurm_env().set("SLURM_STEP_TASKS_PER_NODE", "3,3,1").read().local_world_size, 3);
  EXPECT_EQ(slurm_env().set("SLURM_STEP_TASKS_PER_NODE", "3(x1),3(x1),1(x1)").read()
                .local_world_size, 3);
  for (const char* bad : {"", "3(x2", "3(2),1", "3(x),1", "a,3,1", "0,3,4", "3(x0),7", "3,,4",
                          "3(x2),1,", " 3(x2),1", "3(x2)1"}) {
    const std::string msg = error_of(slurm_env().set("SLURM_STEP_TASKS_PER_NODE", bad));
    EXPECT_TRUE(has(msg, "SLURM_STEP_TASKS_PER_NODE=")) << bad << ": " << msg;
    EXPECT_TRUE(has(msg, "is not Slurm's tasks-per-node list")) << bad << ": " << msg;
  }
}

TEST(ContextSlurm, BadNodeListIsAnError) {
  const std::string msg = error_of(slurm_env().set("SLURM_STEP_NODELIST", "gn[008-"));
  EXPECT_TRUE(has(msg, "SLURM_STEP_NODELIST='gn[008-' is not a Slurm host list")) << msg;
}

TEST(ContextSlurm, InconsistentValuesNameSlurmsVariables) {
  std::string msg = error_of(slurm_env().set("SLURM_PROCID", "7"));
  EXPECT_TRUE(has(msg, "SLURM_PROCID=7 is not below SLURM_STEP_NUM_TASKS=7")) << msg;
  msg = error_of(slurm_env().set("SLURM_LOCALID", "3"));
  EXPECT_TRUE(has(msg, "SLURM_LOCALID=3 is not below SLURM_STEP_TASKS_PER_NODE=3")) << msg;
  msg = error_of(slurm_env().set("SLURM_NODEID", "3"));
  EXPECT_TRUE(has(msg, "SLURM_NODEID=3 is not below SLURM_STEP_NUM_NODES=3")) << msg;
}
