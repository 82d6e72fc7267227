#include "options.hpp"

#include <gtest/gtest.h>

#include "error.hpp"

namespace p = ddp::plan;

namespace {
std::string error_of(std::string_view name, std::string_view value) {
  p::UserOptions o;
  try {
    p::apply_user_option(o, name, value);
  } catch (const p::PlanError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST(UserOptions, ParsesEveryOption) {
  p::UserOptions o;
  p::apply_user_option(o, "ddp-nodes", "2");
  p::apply_user_option(o, "ddp-gpus", "4");
  p::apply_user_option(o, "ddp-port", "29400");
  p::apply_user_option(o, "ddp-backend", "gloo");
  p::apply_user_option(o, "ddp-bind", "none");
  p::apply_user_option(o, "ddp-verbose", "");
  p::apply_user_option(o, "ddp-profile", "vega");
  EXPECT_TRUE(o.requested);
  EXPECT_EQ(o.nodes, 2u);
  EXPECT_EQ(o.gpus_per_node, 4u);
  EXPECT_EQ(o.port, 29400);
  EXPECT_EQ(o.backend, ddp::contract::Backend::Gloo);
  EXPECT_EQ(o.bind, p::Bind::None);
  EXPECT_TRUE(o.verbose);
  EXPECT_EQ(o.profile, "vega");
}

TEST(UserOptions, DdpAloneRequestsAndDdpWithValueNamesProfile) {
  p::UserOptions o;
  p::apply_user_option(o, "ddp", "");
  EXPECT_TRUE(o.requested);
  EXPECT_FALSE(o.profile);
  p::apply_user_option(o, "ddp", "olivia");
  EXPECT_EQ(o.profile, "olivia");
}

TEST(UserOptions, AutoPortClearsFixedPort) {
  p::UserOptions o;
  p::apply_user_option(o, "ddp-port", "1234");
  p::apply_user_option(o, "ddp-port", "auto");
  EXPECT_FALSE(o.port);
}

TEST(UserOptions, BadValuesNameOptionValueAndAllowed) {
  EXPECT_NE(error_of("ddp-nodes", "0").find("--ddp-nodes='0' is out of range; allowed: 1..100000"),
            std::string::npos);
  EXPECT_NE(error_of("ddp-nodes", "two").find("not a whole number"), std::string::npos);
  EXPECT_NE(error_of("ddp-gpus", "-4").find("--ddp-gpus"), std::string::npos);
  EXPECT_NE(error_of("ddp-gpus", "65").find("1..64"), std::string::npos);
  EXPECT_NE(error_of("ddp-port", "0").find("1..65535"), std::string::npos);
  EXPECT_NE(error_of("ddp-port", "65536").find("'auto'"), std::string::npos);
  EXPECT_NE(error_of("ddp-backend", "mpi").find("allowed: nccl (GPUs) or gloo (CPUs)"),
            std::string::npos);
  EXPECT_NE(error_of("ddp-bind", "spread").find("closest"), std::string::npos);
  EXPECT_NE(error_of("ddp-profile", "../etc/passwd").find("not a path"), std::string::npos);
  EXPECT_NE(error_of("ddp-profile", "a/b").find("not a profile name"), std::string::npos);
  EXPECT_NE(error_of("ddp-profile", "").find("not a profile name"), std::string::npos);
  EXPECT_NE(error_of("ddp-profile", ".hidden").find("not a profile name"), std::string::npos);
  EXPECT_NE(error_of("ddp", "x;rm -rf /").find("not a profile name"), std::string::npos);
  EXPECT_NE(error_of("ddp-frobnicate", "1").find("not an option"), std::string::npos);
}

TEST(Plugstack, DefaultsWhenEmpty) {
  const p::PlugstackConfig c = p::parse_plugstack_args({});
  EXPECT_EQ(c.port_range.low, 20000);
  EXPECT_EQ(c.port_range.high, 29999);
  EXPECT_EQ(c.activation, p::Activation::OnRequest);
  EXPECT_FALSE(c.user_profiles);
  EXPECT_EQ(c.node_facts_dir, "/run/slurm-ddp");
}

TEST(Plugstack, ParsesEveryKey) {
  const p::PlugstackConfig c = p::parse_plugstack_args(
      {"profile_dir=/etc/x", "default_profile=vega", "port_range=15000-15999",
       "user_profiles=yes", "topology=/var/cache/node.xml", "activate=always",
       "node_facts_dir=/var/lib/slurm-ddp"});
  EXPECT_EQ(c.profile_dir, "/etc/x");
  EXPECT_EQ(c.default_profile, "vega");
  EXPECT_EQ(c.port_range.low, 15000);
  EXPECT_EQ(c.port_range.high, 15999);
  EXPECT_TRUE(c.user_profiles);
  EXPECT_EQ(c.topology_xml, "/var/cache/node.xml");
  EXPECT_EQ(c.activation, p::Activation::Always);
  EXPECT_EQ(c.node_facts_dir, "/var/lib/slurm-ddp");
  EXPECT_EQ(p::parse_plugstack_args({"node_facts_dir=off"}).node_facts_dir, "");
}

TEST(Plugstack, RejectsUnknownKeysAndBadValues) {
  EXPECT_THROW(p::parse_plugstack_args({"portrange=1-2"}), p::PlanError);
  EXPECT_THROW(p::parse_plugstack_args({"port_range"}), p::PlanError);
  EXPECT_THROW(p::parse_plugstack_args({"port_range=30000-40000"}), p::PlanError);  // ephemeral
  EXPECT_THROW(p::parse_plugstack_args({"port_range=20000-19999"}), p::PlanError);
  EXPECT_THROW(p::parse_plugstack_args({"port_range=80-90"}), p::PlanError);  // privileged
  EXPECT_THROW(p::parse_plugstack_args({"profile_dir=relative"}), p::PlanError);
  EXPECT_THROW(p::parse_plugstack_args({"activate=sometimes"}), p::PlanError);
  EXPECT_THROW(p::parse_plugstack_args({"default_profile=../x"}), p::PlanError);
  EXPECT_NO_THROW(p::parse_plugstack_args({"port_range=61000-65000"}));
  for (const char* dir : {"node_facts_dir=", "node_facts_dir=run/x", "node_facts_dir=/"}) {
    try {
      p::parse_plugstack_args({dir});
      ADD_FAILURE() << dir << " was accepted";
    } catch (const p::PlanError& e) {
      EXPECT_NE(std::string(e.what()).find("must be an absolute directory path"), std::string::npos)
          << e.what();
    }
  }
}
