// The sampler's command line, as the plugin writes it and the sampler reads it.
#include <gtest/gtest.h>

#include "error.hpp"
#include "sampler_args.hpp"

using namespace ddp::monitor;

TEST(MonitorArgs, WhatThePluginWritesTheSamplerReads) {
  SamplerArgs a;
  a.interval = 5;
  a.dir = "/scratch/%u/mon";
  a.job = 4294967295u;
  a.step = 3;
  a.node = "gn01";
  a.node_index = 7;
  a.nodes = 8;
  a.tasks = 4;
  a.gpus = {{0, "0000:3b:00.0"}, {2, ""}};
  a.nets = {"ib0"};
  a.ibs = {"mlx5_0:1", "mlx5_1:1"};
  a.control_fd = 3;
  a.reply_fd = 4;
  const SamplerArgs b = parse_sampler_args(to_argv(a));
  EXPECT_EQ(to_argv(b), to_argv(a));
  EXPECT_EQ(b.gpus[0].busid, "0000:3b:00.0");
  EXPECT_EQ(b.gpus[1].index, 2u);
  EXPECT_EQ(b.job, 4294967295u);
}

TEST(MonitorArgs, BadArgumentsAreNamed) {
  const auto error = [](std::vector<std::string> v) {
    try {
      parse_sampler_args(v);
    } catch (const ddp::plan::PlanError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(error({"--job", "1"}).find("needs --job and --node"), std::string::npos);
  EXPECT_NE(error({"--job", "1", "--node", "n1", "--interval", "0"}).find("--interval"),
            std::string::npos);
  EXPECT_NE(error({"--job", "1", "--node", "a/b"}).find("not a plain name"), std::string::npos);
  EXPECT_NE(error({"--bogus", "1"}).find("'--bogus' is not an argument"), std::string::npos);
  EXPECT_NE(error({"--job"}).find("--job needs a value"), std::string::npos);
  EXPECT_NE(error({"--job", "1", "--node", "n", "--task", "7"}).find("RANK:PID"), std::string::npos);
  EXPECT_NE(error({"--job", "1", "--node", "n", "--dir", "rel"}).find("not an absolute path"),
            std::string::npos);
}

TEST(MonitorArgs, DirectoryPatternsAndFileNames) {
  EXPECT_EQ(expand_dir("/scratch/%u/j%j/100%%", "ana", 17), "/scratch/ana/j17/100%");
  EXPECT_THROW(expand_dir("/scratch/%x", "ana", 1), ddp::plan::PlanError);
  EXPECT_THROW(expand_dir("/scratch/%", "ana", 1), ddp::plan::PlanError);
  EXPECT_THROW(expand_dir("scratch", "ana", 1), ddp::plan::PlanError);
  EXPECT_EQ(log_file_name(17, 0, "gn01"), "ddp-monitor-17.0-gn01.jsonl");
}
