// A profile as one node gets it: the first matching override applied, and the JSON that
// `ddp-plan --check-profile` prints.
#include <gtest/gtest.h>

#include "profile.hpp"
#include "profile_json.hpp"
#include "profile_test_util.hpp"

namespace p = ddp::plan;
using profile_test::TempDir;

namespace {

const char* kLab = R"(name: lab
rendezvous: {port_range: [20000, 20999]}
network: {socket_interfaces: [ens1f0], transport: socket, hca: none}
binding: {cpus: closest}
env: {NCCL_IB_DISABLE: "1", NCCL_DEBUG: WARN}
nodes:
  - {match: "node[01-02]", network: {socket_interfaces: [ens1f1]}, env: {NCCL_DEBUG: INFO}}
  - {match: "node02", binding: {cpus: none}}
  - match: "node03"
    env: {NCCL_DEBUG: {value: TRACE, force: true}, EXTRA: "x"}
    binding: {cpus: none}
)";

std::string value_of(const p::ResolvedProfile& r, const std::string& name) {
  for (const auto& v : r.env)
    if (v.name == name) return v.value;
  return "<unset>";
}

}  // namespace

TEST(ProfileResolve, NodesWithoutAnOverrideGetTheProfile) {
  TempDir dir;
  const std::string path = dir.write("lab.yaml", kLab);
  const p::ResolvedProfile r = p::resolve_for_node(p::load_profile(dir.path(), "lab"), "node05");
  EXPECT_EQ(r.name, "lab");
  EXPECT_EQ(r.files, std::vector<std::string>{path});
  EXPECT_FALSE(r.node_override);
  ASSERT_TRUE(r.port_range);
  EXPECT_EQ(r.port_range->high, 20999);
  EXPECT_EQ(r.socket_interfaces, std::vector<std::string>{"ens1f0"});
  EXPECT_EQ(r.transport, p::Transport::Socket);
  EXPECT_EQ(r.hca, p::HcaMode::None);
  EXPECT_EQ(r.bind, p::Bind::Closest);
  EXPECT_EQ(value_of(r, "NCCL_DEBUG"), "WARN");
}

TEST(ProfileResolve, TheFirstMatchingOverrideWinsAlone) {
  TempDir dir;
  const std::string path = dir.write("lab.yaml", kLab);
  const p::Profile lab = p::load_profile(dir.path(), "lab");
  const p::ResolvedProfile n2 = p::resolve_for_node(lab, "node02");
  EXPECT_EQ(n2.node_override, "node02 in node[01-02] (" + path + ":7:5)");
  EXPECT_EQ(n2.socket_interfaces, std::vector<std::string>{"ens1f1"});
  EXPECT_EQ(n2.bind, p::Bind::Closest);  // the second entry also names node02, but comes later
  EXPECT_EQ(value_of(n2, "NCCL_DEBUG"), "INFO");
  EXPECT_EQ(value_of(n2, "NCCL_IB_DISABLE"), "1");  // env merges
  EXPECT_EQ(n2.transport, p::Transport::Socket);    // untouched fields stay
}

TEST(ProfileResolve, OverrideEnvMergesByNameAndKeepsOrder) {
  TempDir dir;
  dir.write("lab.yaml", kLab);
  const p::ResolvedProfile n3 = p::resolve_for_node(p::load_profile(dir.path(), "lab"), "node03");
  ASSERT_EQ(n3.env.size(), 3u);
  EXPECT_EQ(n3.env[0].name, "NCCL_IB_DISABLE");
  EXPECT_EQ(n3.env[1].name, "NCCL_DEBUG");
  EXPECT_EQ(n3.env[1].value, "TRACE");
  EXPECT_TRUE(n3.env[1].forced);
  EXPECT_EQ(n3.env[2].name, "EXTRA");
  EXPECT_EQ(n3.bind, p::Bind::None);
}

TEST(ProfileResolve, BuiltInDefaultsResolveToNothingButTheReason) {
  const p::ProfileChoice none{std::nullopt, "no profile matched: built-in defaults"};
  const p::ResolvedProfile r = p::resolve_for_node(none, "n1");
  EXPECT_EQ(r.name, "");
  EXPECT_EQ(r.reason, "no profile matched: built-in defaults");
  EXPECT_FALSE(r.port_range);
  EXPECT_TRUE(r.socket_interfaces.empty());
  EXPECT_FALSE(r.transport);
  EXPECT_FALSE(r.hca);
  EXPECT_FALSE(r.bind);
  EXPECT_TRUE(r.env.empty());
}

TEST(ProfileResolve, ChoiceCarriesItsReason) {
  TempDir dir;
  dir.write("lab.yaml", kLab);
  const p::ProfileChoice c{p::load_profile(dir.path(), "lab"), "--ddp-profile=lab"};
  const p::ResolvedProfile r = p::resolve_for_node(c, "node01");
  EXPECT_EQ(r.reason, "--ddp-profile=lab");
  EXPECT_EQ(r.socket_interfaces, std::vector<std::string>{"ens1f1"});
}

TEST(ProfileResolve, JsonShowsSettingsAndNullForUnset) {
  TempDir dir;
  const std::string path = dir.write("lab.yaml", kLab);
  const p::ProfileChoice c{p::load_profile(dir.path(), "lab"), "--ddp-profile=lab"};
  const nlohmann::json j = p::profile_to_json(p::resolve_for_node(c, "node03"));
  EXPECT_EQ(j["name"], "lab");
  EXPECT_EQ(j["reason"], "--ddp-profile=lab");
  EXPECT_EQ(j["files"][0], path);
  EXPECT_EQ(j["node_override"], "node03 in node03 (" + path + ":9:5)");
  EXPECT_EQ(j["rendezvous"]["port_range"], nlohmann::json({20000, 20999}));
  EXPECT_TRUE(j["rendezvous"]["host_suffix"].is_null());
  EXPECT_EQ(j["network"]["socket_interfaces"], nlohmann::json({"ens1f0"}));
  EXPECT_EQ(j["network"]["transport"], "socket");
  EXPECT_EQ(j["network"]["hca"], "none");
  EXPECT_EQ(j["binding"]["cpus"], "none");
  EXPECT_EQ(j["env"][1],
            nlohmann::json({{"name", "NCCL_DEBUG"}, {"value", "TRACE"}, {"forced", true}}));
  const nlohmann::json none = p::profile_to_json(p::resolve_for_node(p::ProfileChoice{}, "n"));
  EXPECT_TRUE(none["name"].is_null());
  EXPECT_TRUE(none["network"]["socket_interfaces"].is_null());
  EXPECT_TRUE(none["binding"]["cpus"].is_null());
}

TEST(ProfileResolve, JsonOfAWholeProfileListsItsOverrides) {
  TempDir dir;
  const std::string path = dir.write("lab.yaml", kLab);
  const nlohmann::json j = p::profile_to_json(p::load_profile(dir.path(), "lab"));
  EXPECT_EQ(j["name"], "lab");
  EXPECT_TRUE(j["match"].is_null());
  ASSERT_EQ(j["nodes"].size(), 3u);
  EXPECT_EQ(j["nodes"][0]["match"], "node[01-02]");
  EXPECT_EQ(j["nodes"][0]["where"], path + ":7:5");
  EXPECT_EQ(j["nodes"][0]["network"]["socket_interfaces"], nlohmann::json({"ens1f1"}));
  EXPECT_TRUE(j["nodes"][0]["network"]["transport"].is_null());
  EXPECT_EQ(j["env"].size(), 2u);
}
