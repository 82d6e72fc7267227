// The profile schema: every key, every type, every value rule, each error pointing at
// file:line:column with the fix.
#include <gtest/gtest.h>

#include "hostlist.hpp"
#include "profile.hpp"
#include "profile_test_util.hpp"

namespace p = ddp::plan;
using profile_test::error_of;
using profile_test::TempDir;

namespace {

// The error that loading NAME.yaml with this text gives ("" when it loads).
std::string error_in(const TempDir& dir, const std::string& text, const std::string& name = "t") {
  const std::string path = dir.write(name + ".yaml", text);
  return error_of([&] { p::load_profile_file(path); });
}

p::Profile parsed(const TempDir& dir, const std::string& text) {
  return p::load_profile_file(dir.write("t.yaml", "name: t\n" + text));
}

}  // namespace

TEST(ProfileParse, ReadsEveryKeyOfTheSchema) {
  TempDir dir;
  const std::string path = dir.write("vega.yaml", R"(name: vega
description: IZUM Vega GPU nodes, 4x A100, HDR InfiniBand
match: {cluster: vega, nodes: "gn[001-003]"}
rendezvous: {port_range: [20000, 29999], host_suffix: "-ib"}
network: {socket_interfaces: [ib0, ib1], transport: ib, hca: list, hca_list: [mlx5_0:1, mlx5_1]}
binding: {cpus: closest}
env: {NCCL_NET_GDR_LEVEL: "5", NCCL_DEBUG: WARN, NCCL_PROTO: {value: "^LL128", force: true}}
nodes:
  - {match: "node02", network: {socket_interfaces: [ens1f0np0]}, binding: {cpus: none}}
  - match: "node[03-04]"
    env: {NCCL_DEBUG: INFO}
)");
  const p::Profile v = p::load_profile_file(path);
  EXPECT_EQ(v.name, "vega");
  EXPECT_EQ(v.description, "IZUM Vega GPU nodes, 4x A100, HDR InfiniBand");
  EXPECT_EQ(v.files, std::vector<std::string>{path});
  EXPECT_EQ(v.match.cluster, "vega");
  EXPECT_EQ(v.match.nodes, "gn[001-003]");
  EXPECT_TRUE(p::hostlist_contains(*v.match.nodes, "gn003"));
  EXPECT_FALSE(p::hostlist_contains(*v.match.nodes, "gn004"));
  EXPECT_EQ(v.match.where, path + ":3:8");
  ASSERT_TRUE(v.port_range);
  EXPECT_EQ(v.port_range->low, 20000);
  EXPECT_EQ(v.port_range->high, 29999);
  EXPECT_EQ(v.host_suffix, "-ib");
  EXPECT_EQ(v.settings.socket_interfaces, (std::vector<std::string>{"ib0", "ib1"}));
  EXPECT_EQ(v.settings.transport, p::Transport::Ib);
  EXPECT_EQ(v.settings.hca, p::HcaMode::List);
  EXPECT_EQ(v.settings.hca_list, (std::vector<std::string>{"mlx5_0:1", "mlx5_1"}));
  EXPECT_EQ(v.settings.bind, p::Bind::Closest);
  ASSERT_EQ(v.settings.env.size(), 3u);
  EXPECT_EQ(v.settings.env[0].name, "NCCL_NET_GDR_LEVEL");
  EXPECT_EQ(v.settings.env[0].value, "5");
  EXPECT_FALSE(v.settings.env[0].forced);
  EXPECT_EQ(v.settings.env[1].value, "WARN");
  EXPECT_EQ(v.settings.env[2].value, "^LL128");
  EXPECT_TRUE(v.settings.env[2].forced);
  ASSERT_EQ(v.nodes.size(), 2u);
  EXPECT_EQ(v.nodes[0].match, "node02");
  EXPECT_TRUE(p::hostlist_contains(v.nodes[0].match, "node02"));
  EXPECT_EQ(v.nodes[0].where, path + ":9:5");
  EXPECT_EQ(v.nodes[0].settings.socket_interfaces, std::vector<std::string>{"ens1f0np0"});
  EXPECT_EQ(v.nodes[0].settings.bind, p::Bind::None);
  EXPECT_FALSE(v.nodes[0].settings.transport);
  EXPECT_EQ(v.nodes[1].match, "node[03-04]");
  EXPECT_TRUE(p::hostlist_contains(v.nodes[1].match, "node04"));
  ASSERT_EQ(v.nodes[1].settings.env.size(), 1u);
  EXPECT_EQ(v.nodes[1].settings.env[0].value, "INFO");
}

TEST(ProfileParse, AMinimalProfileLeavesEverythingUnset) {
  TempDir dir;
  const p::Profile t = parsed(dir, "");
  EXPECT_TRUE(t.match.empty());
  EXPECT_FALSE(t.port_range);
  EXPECT_FALSE(t.host_suffix);
  EXPECT_FALSE(t.settings.socket_interfaces);
  EXPECT_FALSE(t.settings.transport);
  EXPECT_FALSE(t.settings.hca);
  EXPECT_FALSE(t.settings.bind);
  EXPECT_TRUE(t.settings.env.empty());
  EXPECT_TRUE(t.nodes.empty());
}

TEST(ProfileParse, UnknownKeysAreErrorsWithFileLineColumnAndFix) {
  TempDir dir;
  const std::string f = dir.path() + "/t.yaml";
  std::string e = error_in(dir, "name: t\nnmae: x\n");
  EXPECT_NE(e.find(f + ":2:1: 'nmae' is not a key of the top level; allowed: name, description"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("Fix: remove it or correct its spelling"), std::string::npos) << e;
  e = error_in(dir, "name: t\nnetwork:\n  socket_interface: [ib0]\n");
  EXPECT_NE(e.find(f + ":3:3: 'socket_interface' is not a key of network; allowed: "
                       "socket_interfaces, transport, hca, hca_list"),
            std::string::npos)
      << e;
  e = error_in(dir, "name: t\nenv: {NCCL_PROTO: {value: x, forse: true}}\n");
  EXPECT_NE(e.find(f + ":2:30: 'forse' is not a key of env.NCCL_PROTO; allowed: value, force"),
            std::string::npos)
      << e;
  e = error_in(dir, "name: t\nnodes:\n  - {match: n1, rendezvous: {port_range: [1, 2]}}\n");
  EXPECT_NE(e.find(f + ":3:17: 'rendezvous' is not a key of nodes[0]; allowed: match, network, "
                       "binding, env"),
            std::string::npos)
      << e;
  e = error_in(dir, "name: t\nbinding: {cpus: closest, gpus: all}\n");
  EXPECT_NE(e.find("'gpus' is not a key of binding; allowed: cpus"), std::string::npos) << e;
  e = error_in(dir, "name: t\nmatch: {partition: gpu}\n");
  EXPECT_NE(e.find("'partition' is not a key of match; allowed: cluster, nodes"), std::string::npos)
      << e;
  e = error_in(dir, "name: t\nrendezvous: {port: 29500}\n");
  EXPECT_NE(e.find("'port' is not a key of rendezvous; allowed: port_range, host_suffix"),
            std::string::npos)
      << e;
}

TEST(ProfileParse, WrongTypesNameTheKeyAndWhatWasFound) {
  TempDir dir;
  const std::string f = dir.path() + "/t.yaml";
  std::string e = error_in(dir, "name: t\nnetwork: [ib0]\n");
  EXPECT_NE(e.find(f + ":2:10: network must be a map of keys, found a list. Fix:"),
            std::string::npos)
      << e;
  e = error_in(dir, "name: [t]\n");
  EXPECT_NE(e.find(f + ":1:7: name must be a single value, found a list. Fix:"), std::string::npos)
      << e;
  e = error_in(dir, "name: t\nnetwork: {socket_interfaces: ib0}\n");
  EXPECT_NE(e.find(f + ":2:30: network.socket_interfaces must be a list, found the value 'ib0'"),
            std::string::npos)
      << e;
  e = error_in(dir, "name: t\nnetwork:\nbinding: {cpus: none}\n");
  EXPECT_NE(e.find(f + ":2:1: network must be a map of keys, found nothing"), std::string::npos)
      << e;
  e = error_in(dir, "name: t\nnodes: {match: n1}\n");
  EXPECT_NE(e.find("nodes must be a list, found a map"), std::string::npos) << e;
  e = error_in(dir, "name: t\nenv: [A, B]\n");
  EXPECT_NE(e.find("env must be a map of keys, found a list"), std::string::npos) << e;
  e = error_in(dir, "just: text\n- and a list\n");
  EXPECT_NE(e.find("is not valid YAML"), std::string::npos) << e;
  e = error_in(dir, "just text\n");
  EXPECT_NE(e.find(f + ":1:1: the top level must be a map of keys, found the value 'just text'"),
            std::string::npos)
      << e;
  e = error_in(dir, "name: t\n[a]: b\n");
  EXPECT_NE(e.find(f + ":2:1: the top level has a key that is not a plain name"), std::string::npos)
      << e;
}

TEST(ProfileParse, NestingDeeperThanTheSchemaIsAnError) {
  TempDir dir;
  std::string e = error_in(dir, "name: t\nnetwork: {socket_interfaces: [[ib0]]}\n");
  EXPECT_NE(e.find(":2:31: network.socket_interfaces[0] must be a single value, found a list"),
            std::string::npos)
      << e;
  e = error_in(dir, "name: t\nenv: {A: {value: {x: 1}}}\n");
  EXPECT_NE(e.find(":2:18: env.A.value must be a single value, found a map"), std::string::npos)
      << e;
  e = error_in(dir, "name: t\nbinding: {cpus: {closest: 1}}\n");
  EXPECT_NE(e.find("binding.cpus must be a single value, found a map"), std::string::npos) << e;
  e = error_in(dir, "name: t\nrendezvous: {port_range: [[20000, 29999]]}\n");
  EXPECT_NE(e.find("rendezvous.port_range must hold two ports"), std::string::npos) << e;
}

TEST(ProfileParse, DuplicateKeysAreErrors) {
  TempDir dir;
  const std::string f = dir.path() + "/t.yaml";
  std::string e = error_in(dir, "name: t\nname: t\n");
  EXPECT_NE(e.find(f + ":2:1: name appears twice (first at " + f + ":1:1). Fix: keep one"),
            std::string::npos)
      << e;
  e = error_in(dir, "name: t\nenv:\n  A: '1'\n  A: '2'\n");
  EXPECT_NE(e.find(f + ":4:3: env.A appears twice"), std::string::npos) << e;
}

TEST(ProfileParse, NameIsAValidNameEqualToTheFileName) {
  TempDir dir;
  const std::string f = dir.path() + "/vega.yaml";
  std::string e = error_in(dir, "name: vegas\n", "vega");
  EXPECT_NE(e.find(f + ":1:7: name='vegas' differs from the file's name 'vega.yaml'. Fix: write "
                       "name: vega, or rename the file to vegas.yaml"),
            std::string::npos)
      << e;
  e = error_in(dir, "name: ../vega\n", "vega");
  EXPECT_NE(e.find("name='../vega' is not a profile name"), std::string::npos) << e;
  EXPECT_NE(e.find("Fix:"), std::string::npos) << e;
  e = error_in(dir, "description: no name\n", "vega");
  EXPECT_NE(e.find(f + ":1:1: the profile has no name. Fix: add `name: vega`"), std::string::npos)
      << e;
  const std::string txt = dir.write("vega.txt", "name: vega\n");
  e = error_of([&] { p::load_profile_file(txt); });
  EXPECT_NE(e.find(txt + ": is not named NAME.yaml. Fix: rename it"), std::string::npos) << e;
}

TEST(ProfileParse, PortRangeIsTwoWholePortsOutsideTheEphemeralRange) {
  TempDir dir;
  const auto range_error = [&](const std::string& range) {
    return error_in(dir, "name: t\nrendezvous: {port_range: " + range + "}\n");
  };
  std::string e = range_error("[20000, abc]");
  EXPECT_NE(e.find(":2:34: rendezvous.port_range[1]='abc' is not a whole number in 1024..65535. "
                   "Fix: write a plain number"),
            std::string::npos)
      << e;
  EXPECT_NE(range_error("[20000.5, 29999]").find("port_range[0]='20000.5' is not a whole number"),
            std::string::npos);
  EXPECT_NE(range_error("[-1, 29999]").find("port_range[0]='-1'"), std::string::npos);
  EXPECT_NE(range_error("[0x4e20, 29999]").find("port_range[0]='0x4e20'"), std::string::npos);
  EXPECT_NE(range_error("[80, 90]").find("in 1024..65535"), std::string::npos);
  EXPECT_NE(range_error("[20000, 70000]").find("'70000' is not a whole number in 1024..65535"),
            std::string::npos);
  EXPECT_NE(range_error("[20000]").find("must hold two ports, LOW and HIGH. Fix: write "
                                        "port_range: [LOW, HIGH]"),
            std::string::npos);
  EXPECT_NE(range_error("[29999, 20000]").find("rendezvous.port_range runs backwards"),
            std::string::npos);
  EXPECT_NE(range_error("20000-29999").find("rendezvous.port_range must be a list"),
            std::string::npos);
  e = range_error("[30000, 40000]");
  EXPECT_NE(e.find(":2:26: rendezvous.port_range='30000-40000' overlaps Linux's ephemeral ports "
                   "32768-60999"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("Fix: keep both ends below 32768 or both above 60999"), std::string::npos) << e;
  EXPECT_EQ(range_error("[61000, 65000]"), "");
  EXPECT_EQ(range_error("[1024, 1024]"), "");
}

TEST(ProfileParse, NetworkValuesAreChecked) {
  TempDir dir;
  const auto net_error = [&](const std::string& net) {
    return error_in(dir, "name: t\nnetwork: " + net + "\n");
  };
  std::string e = net_error("{transport: infiniband}");
  EXPECT_NE(e.find(":2:22: network.transport='infiniband' is not allowed; allowed: ib (NCCL over "
                   "InfiniBand verbs), ofi"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("Fix: write one of ib, ofi, socket"), std::string::npos) << e;
  EXPECT_NE(net_error("{hca: sometimes}").find("Fix: write one of nearest, none, list"),
            std::string::npos);
  EXPECT_NE(net_error("{hca: list}").find("network.hca: list needs the HCAs. Fix: add hca_list"),
            std::string::npos);
  EXPECT_NE(net_error("{hca: nearest, hca_list: [mlx5_0]}")
                .find("network.hca_list is read only with hca: list"),
            std::string::npos);
  for (const char* bad : {"mlx5_0:0", "mlx5_0:256", "mlx5 0", "=mlx5_0", "mlx5_0:", ":1"})
    EXPECT_NE(net_error(std::string("{hca: list, hca_list: ['") + bad + "']}")
                  .find("is not an HCA; write DEVICE or DEVICE:PORT"),
              std::string::npos)
        << bad;
  EXPECT_EQ(net_error("{hca: list, hca_list: [mlx5_0:1, mlx5_2]}"), "");
  EXPECT_NE(net_error("{socket_interfaces: []}")
                .find("network.socket_interfaces is an empty list. Fix: list at least one"),
            std::string::npos);
  EXPECT_NE(net_error("{socket_interfaces: [ib0, ib0]}")
                .find("network.socket_interfaces[1]='ib0' is listed twice"),
            std::string::npos);
  for (const char* bad : {"ib0,ib1", "^lo", "=ib0", "a-very-long-name0", "ib 0", ".."})
    EXPECT_NE(net_error(std::string("{socket_interfaces: ['") + bad + "']}")
                  .find("is not a network interface name"),
              std::string::npos)
        << bad;
  e = error_in(dir, "name: t\nrendezvous: {host_suffix: '-ib/x'}\n");
  EXPECT_NE(e.find("rendezvous.host_suffix='-ib/x' is not a host name suffix"), std::string::npos)
      << e;
  e = error_in(dir, "name: t\nbinding: {cpus: spread}\n");
  EXPECT_NE(e.find("binding.cpus='spread' is not allowed; allowed: closest"), std::string::npos)
      << e;
  e = error_in(dir, "name: t\nbinding: {}\n");
  EXPECT_NE(e.find("binding needs cpus. Fix: write binding: {cpus: closest}"), std::string::npos)
      << e;
}

TEST(ProfileParse, HcaChoiceOnlyGoesWithTheIbTransport) {
  TempDir dir;
  const std::string f = dir.path() + "/t.yaml";
  std::string e = error_in(dir, "name: t\nnetwork: {transport: ofi, hca: nearest}\n");
  EXPECT_NE(e.find(f + ": profile 't' combines network.transport: ofi with hca: nearest"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("Fix: set hca: none, or transport: ib"), std::string::npos) << e;
  EXPECT_NE(error_in(dir, "name: t\nnetwork: {transport: socket, hca: list, hca_list: [m]}\n")
                .find("transport: socket with hca: list"),
            std::string::npos);
  EXPECT_EQ(error_in(dir, "name: t\nnetwork: {transport: ofi, hca: none}\n"), "");
  EXPECT_EQ(error_in(dir, "name: t\nnetwork: {transport: ofi}\n"), "");
  // The clash may only appear once an override applies: reported at the override.
  e = error_in(dir,
               "name: t\nnetwork: {hca: nearest}\nnodes:\n"
               "  - {match: n1, network: {transport: socket}}\n");
  EXPECT_NE(e.find(f + ":4:5: the override for 'n1' combines network.transport: socket"),
            std::string::npos)
      << e;
}

TEST(ProfileParse, MatchAndNodeOverridesAreChecked) {
  TempDir dir;
  std::string e = error_in(dir, "name: t\nmatch: {}\n");
  EXPECT_NE(e.find(":2:8: match is empty and would match every node. Fix: give cluster, nodes"),
            std::string::npos)
      << e;
  e = error_in(dir, "name: t\nmatch: {nodes: 'n[1-'}\n");
  EXPECT_NE(e.find(":2:16: match.nodes='n[1-' is not a Slurm host list"), std::string::npos) << e;
  EXPECT_NE(e.find("Fix: write a Slurm host list"), std::string::npos) << e;
  e = error_in(dir, "name: t\nmatch: {cluster: 'my cluster'}\n");
  EXPECT_NE(e.find("match.cluster='my cluster' is not a Slurm cluster name"), std::string::npos)
      << e;
  e = error_in(dir, "name: t\nnodes:\n  - {network: {socket_interfaces: [ib0]}}\n");
  EXPECT_NE(e.find(":3:5: nodes[0] has no match. Fix: add match:"), std::string::npos) << e;
  e = error_in(dir, "name: t\nnodes:\n  - {match: n1}\n");
  EXPECT_NE(e.find(":3:5: nodes[0] changes nothing. Fix: give network, binding or env"),
            std::string::npos)
      << e;
  e = error_in(dir, "name: t\nnodes:\n  - {match: 'n[', env: {A: '1'}}\n");
  EXPECT_NE(e.find("nodes[0].match='n[' is not a Slurm host list"), std::string::npos) << e;
  e = error_in(dir, "name: t\nnodes:\n  - {match: n1, env: {LD_PRELOAD: x.so}}\n");
  EXPECT_NE(e.find(":3:23: variable 'LD_PRELOAD' is a dynamic loader variable"), std::string::npos)
      << e;
}
