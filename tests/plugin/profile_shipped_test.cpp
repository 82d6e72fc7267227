// The profiles shipped in configs/profiles load, are chosen on their own nodes, and give the
// variables their sources document (see the comments in each file).
#include <gtest/gtest.h>

#include <map>

#include "profile.hpp"

namespace p = ddp::plan;

namespace {

const std::string kDir = DDP_PROFILE_DIR;

struct Resolved {
  p::ResolvedProfile profile;
  std::map<std::string, std::pair<std::string, bool>> env;  // name -> value, forced
};

Resolved on_node(const std::optional<std::string>& cluster, const std::string& host) {
  const p::ProfileChoice choice =
      p::select_profile(kDir, std::nullopt, std::nullopt, cluster, host);
  Resolved r{p::resolve_for_node(choice, host), {}};
  for (const auto& v : r.profile.env) r.env[v.name] = {v.value, v.forced};
  return r;
}

std::pair<std::string, bool> plain(const char* value) { return {value, false}; }

}  // namespace

TEST(ProfileShipped, EveryProfileLoads) {
  const auto names = p::list_profiles(kDir);
  EXPECT_EQ(names, (std::vector<std::string>{"ethernet", "generic-ib", "olivia", "vega"}));
  for (const auto& name : names) EXPECT_NO_THROW(p::load_profile(kDir, name)) << name;
}

TEST(ProfileShipped, VegaExtendsGenericIbAndSetsTheGuidesVariables) {
  const Resolved r = on_node(std::string("vega"), "gn12");
  EXPECT_EQ(r.profile.name, "vega");
  EXPECT_EQ(r.profile.reason, "matched cluster vega and node gn12 (gn[01-60])");
  EXPECT_EQ(r.profile.files.size(), 2u);  // vega.yaml, generic-ib.yaml
  EXPECT_EQ(r.profile.socket_interfaces, std::vector<std::string>{"ib0"});
  EXPECT_EQ(r.profile.transport, p::Transport::Ib);
  EXPECT_EQ(r.profile.hca, p::HcaMode::Nearest);
  EXPECT_EQ(r.profile.bind, p::Bind::Closest);
  ASSERT_TRUE(r.profile.port_range);
  EXPECT_EQ(r.profile.port_range->low, 20000);
  EXPECT_EQ(r.profile.port_range->high, 29999);
  EXPECT_EQ(r.env.at("NCCL_NET"), plain("IB"));
  EXPECT_EQ(r.env.at("NCCL_IB_ENABLE"), plain("1"));
  EXPECT_EQ(r.env.at("NCCL_NET_GDR_LEVEL"), plain("5"));
  EXPECT_EQ(r.env.at("NCCL_DEBUG"), plain("WARN"));
  EXPECT_EQ(r.env.size(), 4u);
}

TEST(ProfileShipped, OliviaUsesSlingshotThroughAwsOfiNccl) {
  const Resolved r = on_node(std::string("olivia"), "x1000c0s0b0n0");
  EXPECT_EQ(r.profile.name, "olivia");
  EXPECT_EQ(r.profile.reason, "matched cluster olivia");
  EXPECT_EQ(r.profile.socket_interfaces,
            (std::vector<std::string>{"hsn0", "hsn1", "hsn2", "hsn3"}));
  EXPECT_EQ(r.profile.transport, p::Transport::Ofi);
  EXPECT_EQ(r.profile.hca, p::HcaMode::None);
  const std::map<std::string, std::pair<std::string, bool>> want = {
      {"FI_PROVIDER", plain("cxi")},
      {"NCCL_NET", plain("AWS Libfabric")},
      {"NCCL_NET_GDR_LEVEL", plain("PHB")},
      {"NCCL_CROSS_NIC", plain("1")},
      {"FI_MR_CACHE_MONITOR", plain("userfaultfd")},
      {"FI_CXI_DISABLE_HOST_REGISTER", plain("1")},
      {"FI_CXI_DEFAULT_CQ_SIZE", plain("131072")},
      {"FI_CXI_RDZV_PROTO", plain("alt_read")},
      {"FI_CXI_RDZV_EAGER_SIZE", plain("0")},
      {"FI_CXI_RDZV_GET_MIN", plain("0")},
      {"FI_CXI_RDZV_THRESHOLD", plain("0")},
      {"FI_CXI_DEFAULT_TX_SIZE", plain("2048")},
      {"FI_CXI_RX_MATCH_MODE", plain("hybrid")},
      {"NCCL_PROTO", {"^LL128", true}},  // forced: NVIDIA/nccl issue 2001
  };
  EXPECT_EQ(r.env, want);
}

TEST(ProfileShipped, EthernetGivesEachNodeItsOwnInterface) {
  const std::map<std::string, std::string> interface_of = {
      {"node01", "ens1f1"},    {"node02", "ens1f1"}, {"node03", "ens1f0np0"},
      {"node04", "ens1f0np0"}, {"node05", "ens1f0"}, {"node06", "ens1f0"}};
  for (const auto& [host, interface] : interface_of) {
    const Resolved r = on_node(std::nullopt, host);
    EXPECT_EQ(r.profile.name, "ethernet") << host;
    EXPECT_EQ(r.profile.socket_interfaces, std::vector<std::string>{interface}) << host;
    EXPECT_EQ(r.profile.transport, p::Transport::Socket);
    EXPECT_EQ(r.profile.hca, p::HcaMode::None);
    EXPECT_EQ(r.env.at("NCCL_IB_DISABLE"), plain("1"));
  }
}

TEST(ProfileShipped, GenericIbIsABaseThatNeverMatchesByItself) {
  const p::Profile g = p::load_profile(kDir, "generic-ib");
  EXPECT_TRUE(g.match.empty());
  EXPECT_EQ(g.settings.hca, p::HcaMode::Nearest);
  const Resolved elsewhere = on_node(std::string("somewhere"), "n1");
  EXPECT_EQ(elsewhere.profile.name, "");
  EXPECT_EQ(elsewhere.profile.reason, "no profile matched: built-in defaults");
}
