// The `env` section: names in shell syntax, none that the plugin owns or derives, no loader
// variables, one-line values, and values a profile forces over the user's own.
#include <gtest/gtest.h>

#include "ddp/env_contract.hpp"
#include "profile.hpp"
#include "profile_test_util.hpp"

namespace p = ddp::plan;
using profile_test::error_of;
using profile_test::TempDir;

namespace {

std::string env_error(const TempDir& dir, const std::string& env) {
  const std::string path = dir.write("t.yaml", "name: t\nenv:\n  " + env + "\n");
  return error_of([&] { p::load_profile_file(path); });
}

std::vector<p::ProfileVariable> env_of(const TempDir& dir, const std::string& env) {
  return p::load_profile_file(dir.write("t.yaml", "name: t\nenv: " + env + "\n")).settings.env;
}

}  // namespace

TEST(ProfileEnv, NamesFollowShellSyntax) {
  TempDir dir;
  const std::string f = dir.path() + "/t.yaml";
  for (const char* bad : {"1ABC", "A-B", "'A B'", "'A=B'", "''", "NCCL.DEBUG"}) {
    const std::string e = env_error(dir, std::string(bad) + ": x");
    EXPECT_NE(e.find(f + ":3:3: variable "), std::string::npos) << e;
    EXPECT_NE(e.find("is not a variable name; names are letters, digits and '_', not starting "
                     "with a digit. Fix: correct the name"),
              std::string::npos)
        << e;
  }
  EXPECT_EQ(env_error(dir, "_A1: x"), "");
  EXPECT_EQ(env_error(dir, "nccl_lower: x"), "");
}

TEST(ProfileEnv, VariablesThePluginWritesAreRefused) {
  TempDir dir;
  std::vector<std::string> owned = ddp::contract::rank_variable_names();
  owned.push_back("DDP_ANYTHING");
  for (const std::string& name : owned) {
    const std::string e = env_error(dir, name + ": '1'");
    EXPECT_NE(e.find(":3:3: variable '" + name + "' is written by the plugin for each task"),
              std::string::npos)
        << e;
    EXPECT_NE(e.find("Fix: remove it"), std::string::npos) << e;
  }
  for (const char* name : {"RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK",
                           "NODE_RANK", "MASTER_ADDR", "MASTER_PORT"})
    EXPECT_NE(env_error(dir, std::string(name) + ": x").find("written by the plugin"),
              std::string::npos)
        << name;
}

TEST(ProfileEnv, VariablesDerivedFromOtherKeysPointThere) {
  TempDir dir;
  for (const char* name : {"NCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME"})
    EXPECT_NE(env_error(dir, std::string(name) + ": ib0")
                  .find("Fix: remove it and list the interfaces in network.socket_interfaces"),
              std::string::npos)
        << name;
  EXPECT_NE(env_error(dir, "NCCL_IB_HCA: mlx5_0").find("Fix: remove it and set network.hca"),
            std::string::npos);
  for (const char* name : {"CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "OMP_NUM_THREADS"})
    EXPECT_NE(env_error(dir, std::string(name) + ": '0'")
                  .find("is set by the plugin for each task from the GPU and cores"),
              std::string::npos)
        << name;
}

TEST(ProfileEnv, LoaderVariablesAreRefused) {
  TempDir dir;
  for (const char* name : {"LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "LD_BIND_NOW", "LD_"}) {
    const std::string e = env_error(dir, std::string(name) + ": /tmp/x.so");
    EXPECT_NE(e.find("variable '" + std::string(name) + "' is a dynamic loader variable (LD_*)"),
              std::string::npos)
        << e;
    EXPECT_NE(e.find("Fix: remove it"), std::string::npos) << e;
  }
  // Forcing does not make it acceptable.
  EXPECT_NE(env_error(dir, "LD_PRELOAD: {value: x.so, force: true}").find("dynamic loader"),
            std::string::npos);
}

TEST(ProfileEnv, ValuesAreOneLineWithoutNul) {
  TempDir dir;
  const std::string f = dir.path() + "/t.yaml";
  std::string e = env_error(dir, "A: \"x\\ny\"");
  EXPECT_NE(e.find(f + ":3:6: env.A='x\\x0ay' holds a line break or NUL; values are one line. "
                       "Fix: write the value on one line"),
            std::string::npos)
      << e;
  EXPECT_NE(env_error(dir, "A: \"x\\ry\"").find("line break or NUL"), std::string::npos);
  EXPECT_NE(env_error(dir, "A: \"x\\0y\"").find("env.A='x\\x00y' holds a line break or NUL"),
            std::string::npos);
  EXPECT_NE(env_error(dir, "A: |\n    one\n    two").find("line break"), std::string::npos);
  EXPECT_NE(env_error(dir, "A: {value: \"x\\ny\", force: true}").find("env.A.value="),
            std::string::npos);
  EXPECT_EQ(env_error(dir, "A: ''"), "");  // empty is a value
  EXPECT_EQ(env_error(dir, "A: 'a b: c # d'"), "");
}

TEST(ProfileEnv, ValuesKeepTheirTextAndOrder) {
  TempDir dir;
  const auto env = env_of(dir, "{Z: 5, A: 1.50, M: true, B: 0x10, C: '007', D: ~x}");
  ASSERT_EQ(env.size(), 6u);
  const std::vector<std::pair<std::string, std::string>> want = {
      {"Z", "5"}, {"A", "1.50"}, {"M", "true"}, {"B", "0x10"}, {"C", "007"}, {"D", "~x"}};
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(env[i].name, want[i].first);
    EXPECT_EQ(env[i].value, want[i].second);
  }
  TempDir other;
  EXPECT_NE(env_error(other, "A:").find("env.A must be a single value, found nothing"),
            std::string::npos);
  EXPECT_NE(env_error(other, "A: [1, 2]").find("env.A must be a single value, found a list"),
            std::string::npos);
}

TEST(ProfileEnv, ForcedValuesUseAValueMap) {
  TempDir dir;
  auto env =
      env_of(dir, "{A: {value: x, force: true}, B: {value: y, force: false}, C: {value: z}}");
  ASSERT_EQ(env.size(), 3u);
  EXPECT_TRUE(env[0].forced);
  EXPECT_EQ(env[0].value, "x");
  EXPECT_FALSE(env[1].forced);
  EXPECT_FALSE(env[2].forced);
  std::string e = env_error(dir, "A: {value: x, force: yes}");
  EXPECT_NE(e.find(":3:24: env.A.force='yes' is not a boolean; allowed: true or false. Fix: write "
                   "force: true or force: false"),
            std::string::npos)
      << e;
  e = env_error(dir, "A: {force: true}");
  EXPECT_NE(e.find(":3:6: env.A has no value. Fix: write A: {value: \"...\", force: true}"),
            std::string::npos)
      << e;
}
