#include "placement.hpp"

#include <gtest/gtest.h>

#include <filesystem>

namespace p = ddp::plan;

namespace {

p::Locality at(std::vector<unsigned long long> switches, const std::string& numa, int package,
               p::CpuList cpus) {
  return p::Locality{std::move(switches), numa, package, std::move(cpus)};
}

p::Nic hca(const std::string& name, p::Locality where, bool active, const std::string& netdev = "") {
  p::Nic n;
  n.name = name;
  n.kind = p::NicKind::InfiniBand;
  n.ports = {{1, active, netdev}};
  n.locality = std::move(where);
  return n;
}

p::Gpu gpu(const std::string& busid, p::Locality where) {
  p::Gpu g;
  g.busid = busid;
  g.locality = std::move(where);
  return g;
}

// Two sockets; GPU0 shares PCIe switch 10 with mlx5_0, GPU1 sits on socket 1 with mlx5_1 on
// another switch; cores 0-7 on socket 0, 8-15 on socket 1.
p::Topology two_socket() {
  p::Topology t;
  t.source = "synthetic";
  const p::CpuList s0{0, 1, 2, 3, 4, 5, 6, 7}, s1{8, 9, 10, 11, 12, 13, 14, 15};
  t.gpus = {gpu("0000:01:00.0", at({10, 1}, "0x1", 0, s0)),
            gpu("0000:81:00.0", at({20}, "0x2", 1, s1))};
  t.nics = {hca("mlx5_0", at({10, 1}, "0x1", 0, s0), true, "ib0"),
            hca("mlx5_1", at({30}, "0x2", 1, s1), true, "ib1")};
  for (unsigned c = 0; c < 16; ++c) t.cpus.push_back(c);
  return t;
}

p::PlacementRequest request(std::vector<unsigned> gpus, unsigned tasks) {
  p::PlacementRequest r;
  r.step_gpus = std::move(gpus);
  r.local_tasks = tasks;
  return r;
}

p::NetFacts net(std::vector<std::string> up, std::optional<std::string> default_route = {}) {
  p::NetFacts n;
  n.interfaces.push_back({"lo", true, true, true});
  for (auto& name : up) n.interfaces.push_back({name, true, false, true});
  n.default_route = std::move(default_route);
  return n;
}

}  // namespace

TEST(Placement, EachGpuGetsItsNearestActiveHcaAndItsCores) {
  const auto topo = two_socket();
  const auto out = p::place_ranks(topo, net({"eth0"}, "eth0"), request({0, 1}, 2));
  ASSERT_EQ(out.ranks.size(), 2u);
  ASSERT_TRUE(out.ranks[0].nic && out.ranks[1].nic);
  EXPECT_EQ(topo.nics[out.ranks[0].nic->nic].name, "mlx5_0");
  EXPECT_EQ(out.ranks[0].nic->path, p::PathType::PIX);
  EXPECT_EQ(topo.nics[out.ranks[1].nic->nic].name, "mlx5_1");
  EXPECT_EQ(out.ranks[1].nic->path, p::PathType::PHB);
  EXPECT_EQ(out.ranks[0].cpus, (p::CpuList{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(out.ranks[1].cpus, (p::CpuList{8, 9, 10, 11, 12, 13, 14, 15}));
  EXPECT_TRUE(out.warnings.empty());
}

TEST(Placement, DownPortsAreSkippedForTheNextNearest) {
  auto topo = two_socket();
  topo.nics[0].ports[0].active = false;
  const auto out = p::place_ranks(topo, net({}), request({0}, 1));
  ASSERT_TRUE(out.ranks[0].nic);
  EXPECT_EQ(topo.nics[out.ranks[0].nic->nic].name, "mlx5_1");
  EXPECT_EQ(out.ranks[0].nic->path, p::PathType::SYS);
}

TEST(Placement, NoActivePortMeansNoChoiceAndAWarning) {
  auto topo = two_socket();
  for (auto& n : topo.nics) n.ports[0].active = false;
  const auto out = p::place_ranks(topo, net({}), request({0, 1}, 2));
  EXPECT_FALSE(out.ranks[0].nic);
  ASSERT_FALSE(out.warnings.empty());
  EXPECT_NE(out.warnings[0].find("no InfiniBand/RoCE port is ACTIVE"), std::string::npos);
}

TEST(Placement, EquallyCloseHcasAreSpreadOverTheGpus) {
  auto topo = two_socket();
  topo.gpus[1] = gpu("0000:02:00.0", at({40}, "0x1", 0, topo.gpus[0].locality.cpus));
  topo.gpus[0].locality.switches = {50};
  topo.nics[1].locality = at({30}, "0x1", 0, topo.nics[0].locality.cpus);  // both PHB now
  const auto out = p::place_ranks(topo, net({}), request({0, 1}, 2));
  ASSERT_TRUE(out.ranks[0].nic && out.ranks[1].nic);
  EXPECT_NE(out.ranks[0].nic->nic, out.ranks[1].nic->nic);
  // The two GPUs share one locality: its cores are split between them.
  EXPECT_EQ(out.ranks[0].cpus, (p::CpuList{0, 1, 2, 3}));
  EXPECT_EQ(out.ranks[1].cpus, (p::CpuList{4, 5, 6, 7}));
}

TEST(Placement, CoresAreRestrictedToTheStepsCpus) {
  auto req = request({0}, 1);
  req.allowed_cpus = {2, 3, 9};
  const auto out = p::place_ranks(two_socket(), net({}), req);
  EXPECT_EQ(out.ranks[0].cpus, (p::CpuList{2, 3}));
}

TEST(Placement, GpuCoresOutsideTheStepFallBackToTheStepsCpusWithAWarning) {
  auto req = request({0}, 1);
  req.allowed_cpus = {9, 10};
  const auto out = p::place_ranks(two_socket(), net({"eth0"}, "eth0"), req);
  EXPECT_EQ(out.ranks[0].cpus, (p::CpuList{9, 10}));
  ASSERT_EQ(out.warnings.size(), 1u);
  EXPECT_NE(out.warnings[0].find("not among the step's CPUs"), std::string::npos);
}

TEST(Placement, AGpuIndexHwlocCannotSeeIsAFallbackNotAGuess) {
  const auto out = p::place_ranks(two_socket(), net({}), request({0, 5}, 2));
  EXPECT_FALSE(out.ranks[0].gpu);
  EXPECT_FALSE(out.ranks[0].nic);
  ASSERT_FALSE(out.warnings.empty());
  EXPECT_NE(out.warnings[0].find("Slurm gave GPU 5 but hwloc finds 2 GPU(s)"), std::string::npos);
  // Still pinned: a fair split of the step's CPUs.
  EXPECT_EQ(out.ranks[1].cpus.size(), 8u);
}

TEST(Placement, BindNoneLeavesCpusAlone) {
  auto req = request({0, 1}, 2);
  req.bind = p::Bind::None;
  const auto out = p::place_ranks(two_socket(), net({}), req);
  EXPECT_TRUE(out.ranks[0].cpus.empty());
  EXPECT_TRUE(out.ranks[0].nic);
}

TEST(Placement, CpuOnlyRanksShareTheStepsCpusFairly) {
  p::Topology topo;
  topo.cpus = {0, 1, 2, 3, 4};
  const auto out = p::place_ranks(topo, net({}), request({}, 2));
  EXPECT_EQ(out.ranks[0].cpus, (p::CpuList{0, 1}));
  EXPECT_EQ(out.ranks[1].cpus, (p::CpuList{2, 3, 4}));
  EXPECT_EQ(p::fair_share({7}, 2, 3), (p::CpuList{7}));  // fewer CPUs than ranks: reused
}

TEST(Placement, SocketInterfacePreferenceThenHighSpeedThenDefaultRoute) {
  const auto topo = two_socket();
  auto req = request({0}, 1);
  req.preferred_interfaces = {"ens9", "eth1"};
  auto out = p::place_ranks(topo, net({"eth1", "ib0"}, "eth0"), req);
  EXPECT_EQ(out.socket_interface, "eth1");
  req.preferred_interfaces.clear();
  out = p::place_ranks(topo, net({"eth0", "ib0"}, "eth0"), req);
  EXPECT_EQ(out.socket_interface, "ib0");
  out = p::place_ranks(topo, net({"eth0"}, "eth0"), req);  // ib0 not up
  EXPECT_EQ(out.socket_interface, "eth0");
  EXPECT_EQ(out.socket_interface_reason, "default route");
  out = p::place_ranks(p::Topology{}, net({"veth7"}), request({}, 1));
  EXPECT_EQ(out.socket_interface, "veth7");
  out = p::place_ranks(p::Topology{}, net({"a", "b"}), request({}, 1));
  EXPECT_FALSE(out.socket_interface);
  EXPECT_FALSE(out.warnings.empty());
}

TEST(NetFacts, DefaultRouteIsReadFromProcNetRoute) {
  const std::string table =
      "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n"
      "eth0\t00004D0A\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n"
      "ens1f0\t00000000\t0100A8C0\t0003\t0\t0\t100\t00000000\t0\t0\t0\n";
  EXPECT_EQ(p::parse_default_route(table), "ens1f0");
  EXPECT_FALSE(p::parse_default_route(table.substr(0, table.rfind("ens1f0"))));
}

// The placement on real machines (tests/data/topologies, facts in SOURCES.md there).
class RealTopology : public ::testing::Test {
 protected:
  static std::optional<p::Topology> load(const std::string& file) {
    const std::filesystem::path path = std::filesystem::path(DDP_TOPOLOGY_DIR) / file;
    if (!std::filesystem::exists(path)) {
      ADD_FAILURE() << path << " is missing; the topologies belong to the repository (tests/data)";
      return std::nullopt;
    }
    return p::load_topology(path.string());
  }
};

TEST_F(RealTopology, Ipa20EveryGpuUsesTheOnlyActiveHca) {
  const auto topo = load("ipa20.xml");
  ASSERT_TRUE(topo);
  const auto out = p::place_ranks(*topo, net({}), request({0, 1, 2, 3}, 4));
  for (unsigned r = 0; r < 4; ++r) {
    ASSERT_TRUE(out.ranks[r].nic) << r;
    EXPECT_EQ(topo->nics[out.ranks[r].nic->nic].name, "mlx5_0") << r;
    EXPECT_EQ(out.ranks[r].nic->port, 1u);
  }
  EXPECT_EQ(out.ranks[0].nic->path, p::PathType::PIX);
  EXPECT_EQ(out.ranks[2].nic->path, p::PathType::SYS);
}

TEST_F(RealTopology, CoralLassenSpreadsGpuPairsOverTheirSocketsHcas) {
  const auto topo = load("coral-lassen.xml");
  ASSERT_TRUE(topo);
  const auto out = p::place_ranks(*topo, net({}), request({0, 1, 2, 3}, 4));
  std::vector<std::string> names;
  for (const auto& r : out.ranks) {
    ASSERT_TRUE(r.nic);
    EXPECT_EQ(r.nic->path, p::PathType::PHB);
    names.push_back(topo->nics[r.nic->nic].name);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"}));
  // GPUs 0 and 1 share socket 0's cores: disjoint halves.
  ASSERT_FALSE(out.ranks[0].cpus.empty());
  EXPECT_LT(out.ranks[0].cpus.back(), out.ranks[1].cpus.front());
}
