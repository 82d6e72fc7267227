// The topology model against the real hwloc exports in tests/data/topologies and the reference
// facts of its SOURCES.md (GPU and NIC lists, port states, NCCL path types, cores per GPU).
#include "topology.hpp"

#include <gtest/gtest.h>
#include <hwloc.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "error.hpp"
#include "limits.hpp"
#include "parse.hpp"

namespace p = ddp::plan;
namespace fs = std::filesystem;

namespace {

const fs::path kDir = DDP_TOPOLOGY_DIR;

const char* const kReferenceFiles[] = {
    "ipa20.xml",          "tuo.SPX.xml",           "coral-lassen.xml",
    "g4dnmetal.xml",      "eas-tioga.xml",         "arm64-ulna-hwloc1.xml",
    "24em64t-2n6c2t-pci.xml", "nvidiaDGX2.xml"};

std::vector<std::string> gpu_busids(const p::Topology& t) {
  std::vector<std::string> out;
  for (const auto& g : t.gpus) out.push_back(g.busid);
  return out;
}

std::vector<std::string> gpu_names(const p::Topology& t) {
  std::vector<std::string> out;
  for (const auto& g : t.gpus) out.push_back(g.name);
  return out;
}

std::vector<std::string> nic_names(const p::Topology& t) {
  std::vector<std::string> out;
  for (const auto& n : t.nics) out.push_back(n.name);
  return out;
}

const p::Gpu& gpu(const p::Topology& t, const std::string& name_or_busid) {
  for (const auto& g : t.gpus)
    if (g.name == name_or_busid || g.busid == name_or_busid) return g;
  throw std::runtime_error("no GPU " + name_or_busid + " in " + t.source);
}

const p::Nic& nic(const p::Topology& t, const std::string& name) {
  for (const auto& n : t.nics)
    if (n.name == name) return n;
  throw std::runtime_error("no NIC " + name + " in " + t.source);
}

p::PathType path(const p::Topology& t, const std::string& gpu_name, const std::string& nic_name) {
  return p::path_between(gpu(t, gpu_name).locality, nic(t, nic_name).locality);
}

p::PathType gpu_path(const p::Topology& t, const std::string& a, const std::string& b) {
  return p::path_between(gpu(t, a).locality, gpu(t, b).locality);
}

// An oracle independent of the code under test: the PUs of logical cores [first, last], read
// with hwloc directly, to check SOURCES.md's "cores (logical)" column.
p::CpuList pus_of_cores(const std::string& file, unsigned first, unsigned last) {
  hwloc_topology_t t = nullptr;
  hwloc_topology_init(&t);
  hwloc_topology_set_xml(t, (kDir / file).c_str());
  hwloc_topology_load(t);
  p::CpuList out;
  for (unsigned i = first; i <= last; ++i) {
    hwloc_obj_t core = hwloc_get_obj_by_type(t, HWLOC_OBJ_CORE, i);
    if (core == nullptr) continue;
    for (int pu = hwloc_bitmap_first(core->cpuset); pu != -1;
         pu = hwloc_bitmap_next(core->cpuset, pu))
      out.push_back(static_cast<unsigned>(pu));
  }
  hwloc_topology_destroy(t);
  std::sort(out.begin(), out.end());
  return out;
}

std::string expect_plan_error(const std::optional<std::string>& path) {
  try {
    p::load_topology(path);
  } catch (const p::PlanError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no PlanError for " << path.value_or("live");
  return "";
}

class TopologyFile : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fs::is_directory(kDir)) << "reference topologies not found at " << kDir
                                        << "; they belong to the repository (tests/data)";
  }

  // Loaded once per file for the whole run.
  static const p::Topology& load(const std::string& file) {
    static std::map<std::string, p::Topology> cache;
    auto it = cache.find(file);
    if (it == cache.end()) it = cache.emplace(file, p::load_topology((kDir / file).string())).first;
    return it->second;
  }
};

// ---- CPU lists ----------------------------------------------------------------------------

TEST(CpuList, FormatsRunsAsRanges) {
  EXPECT_EQ(p::format_cpu_list({}), "");
  EXPECT_EQ(p::format_cpu_list({7}), "7");
  EXPECT_EQ(p::format_cpu_list({3, 4}), "3-4");
  EXPECT_EQ(p::format_cpu_list({0, 1, 2, 3, 8, 10, 11}), "0-3,8,10-11");
  EXPECT_EQ(p::format_cpu_list({0, 2, 4}), "0,2,4");
  EXPECT_EQ(p::format_cpu_list({5, 1, 2, 1}), "1-2,5");
}

// The contract's list parser (parse.hpp) reads what format_cpu_list writes.
TEST(CpuList, ParseIsTheInverseOfFormat) {
  const std::vector<p::CpuList> lists = {
      {}, {0}, {0, 1}, {0, 2, 4, 6}, {1, 2, 3, 7, 8, 9, 65535}, {14, 15, 16, 126, 127}};
  for (const auto& cpus : lists)
    EXPECT_EQ(p::parse_index_list("cpus", p::format_cpu_list(cpus), p::kMaxCpuId), cpus)
        << p::format_cpu_list(cpus);
  for (const char* text : {"0-3,8,10-11", "0,2,4", "8-87,96-175", "1"})
    EXPECT_EQ(p::format_cpu_list(p::parse_index_list("cpus", text, p::kMaxCpuId)), text);
}

// ---- path rule without hwloc ------------------------------------------------------------------

TEST(TopologyPath, FollowsNcclRule) {
  p::Locality a;
  a.switches = {10, 20};
  a.numa = "0";
  p::Locality b = a;
  EXPECT_EQ(p::path_between(a, b), p::PathType::PIX);
  b.switches = {11, 20};
  EXPECT_EQ(p::path_between(a, b), p::PathType::PXB);
  b.switches = {12};
  EXPECT_EQ(p::path_between(a, b), p::PathType::PHB);
  b.numa = "1";
  EXPECT_EQ(p::path_between(a, b), p::PathType::SYS);
  // Two devices on root ports share no switch: PHB at best, never PIX.
  p::Locality c, d;
  c.numa = d.numa = "0";
  EXPECT_EQ(p::path_between(c, d), p::PathType::PHB);
  // An unknown NUMA node is not "the same" one.
  c.numa = d.numa = "";
  EXPECT_EQ(p::path_between(c, d), p::PathType::SYS);
}

TEST(TopologyNames, AreStable) {
  EXPECT_STREQ(p::path_type_name(p::PathType::PIX), "PIX");
  EXPECT_STREQ(p::path_type_name(p::PathType::SYS), "SYS");
  EXPECT_STREQ(p::nic_kind_name(p::NicKind::InfiniBand), "infiniband");
  EXPECT_STREQ(p::nic_kind_name(p::NicKind::Slingshot), "slingshot");
}

// ---- loading ------------------------------------------------------------------------------

TEST(TopologyLive, LoadsThisMachine) {
  p::Topology t;
  ASSERT_NO_THROW(t = p::load_topology(std::nullopt));
  EXPECT_EQ(t.source, "live");
  EXPECT_FALSE(t.cpus.empty());
  EXPECT_GT(t.load_ms, 0.0);
  RecordProperty("load_ms", std::to_string(t.load_ms));
  for (const auto& g : t.gpus) EXPECT_EQ(g.busid.size(), 12u) << g.busid;
}

TEST(TopologyErrors, MissingFileNamesThePathInFull) {
  const std::string missing =
      (fs::path(testing::TempDir()) / "a-directory-name-long-enough-to-pass-sixty-four-chars" /
       "no-such-topology.xml")
          .string();
  const std::string msg = expect_plan_error(missing);
  EXPECT_NE(msg.find(missing), std::string::npos) << msg;
  EXPECT_NE(msg.find("lstopo"), std::string::npos) << msg;
}

TEST(TopologyErrors, GarbageEmptyDirectoryAndHwloc3FilesAreRejected) {
  const fs::path dir = fs::path(testing::TempDir()) / "ddp-topology-test";
  fs::create_directories(dir);
  const auto write = [&](const char* name, const std::string& text) {
    std::ofstream(dir / name) << text;
    return (dir / name).string();
  };
  for (const std::string& path :
       {write("garbage.xml", "this is not <xml"), write("empty.xml", ""),
        write("other.xml", "<?xml version=\"1.0\"?><root><child/></root>"), dir.string()}) {
    const std::string msg = expect_plan_error(path);
    EXPECT_NE(msg.find(path), std::string::npos) << msg;
  }
  const std::string v3 = write(
      "v3.xml",
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE topology SYSTEM \"hwloc2.dtd\">\n"
      "<topology version=\"3.0\">\n<object type=\"Machine\" os_index=\"0\"/>\n</topology>\n");
  const std::string msg = expect_plan_error(v3);
  EXPECT_NE(msg.find(v3), std::string::npos) << msg;
  EXPECT_NE(msg.find("3.x"), std::string::npos) << msg;
  fs::remove_all(dir);
}

TEST_F(TopologyFile, EveryFileLoadsIntoAConsistentModel) {
  std::set<std::string> found;
  for (const auto& entry : fs::directory_iterator(kDir)) {
    if (entry.path().extension() != ".xml") continue;
    const std::string file = entry.path().filename().string();
    found.insert(file);
    SCOPED_TRACE(file);
    const p::Topology& t = load(file);
    RecordProperty("load_ms_" + file, std::to_string(t.load_ms));
    EXPECT_EQ(t.source, (kDir / file).string());
    EXPECT_FALSE(t.cpus.empty());
    EXPECT_GT(t.load_ms, 0.0);
    EXPECT_TRUE(std::is_sorted(t.cpus.begin(), t.cpus.end()));
    EXPECT_EQ(p::parse_index_list("cpus", p::format_cpu_list(t.cpus), p::kMaxCpuId), t.cpus);
    const auto busids = gpu_busids(t);
    EXPECT_TRUE(std::is_sorted(busids.begin(), busids.end()));
    EXPECT_EQ(std::set<std::string>(busids.begin(), busids.end()).size(), busids.size());
    for (const auto& g : t.gpus) {
      EXPECT_EQ(g.busid.size(), 12u) << g.busid;
      EXPECT_TRUE(g.vendor_id == 0x10de || g.vendor_id == 0x1002) << g.busid;
      EXPECT_FALSE(g.locality.cpus.empty()) << g.busid;
      EXPECT_FALSE(g.locality.numa.empty()) << g.busid;
      EXPECT_TRUE(std::includes(t.cpus.begin(), t.cpus.end(), g.locality.cpus.begin(),
                                g.locality.cpus.end()))
          << g.busid;
    }
    for (const auto& n : t.nics) {
      EXPECT_FALSE(n.ports.empty()) << n.name;
      EXPECT_FALSE(n.busid.empty()) << n.name;
      for (const auto& port : n.ports) EXPECT_GE(port.number, 1u) << n.name;
    }
  }
  for (const char* file : kReferenceFiles) EXPECT_EQ(found.count(file), 1u) << file;
}

// ---- 1. ipa20: 4x H100, 4 HCAs, SNC4 ------------------------------------------------------

TEST_F(TopologyFile, Ipa20GpusAreTheFourH100sByCudaName) {
  const auto& t = load("ipa20.xml");
  EXPECT_EQ(gpu_busids(t), (std::vector<std::string>{"0000:4e:00.0", "0000:5f:00.0",
                                                      "0000:cb:00.0", "0000:db:00.0"}));
  EXPECT_EQ(gpu_names(t), (std::vector<std::string>{"cuda0", "cuda1", "cuda2", "cuda3"}));
  EXPECT_EQ(t.gpus[0].vendor_id, 0x10deu);
  EXPECT_EQ(t.gpus[0].device_id, 0x2330u);
  EXPECT_EQ(t.cpus.size(), 224u);
}

TEST_F(TopologyFile, Ipa20OnlyMlx50HasAnActivePort) {
  const auto& t = load("ipa20.xml");
  EXPECT_EQ(nic_names(t), (std::vector<std::string>{"eno8303", "eno8403", "mlx5_0", "mlx5_1",
                                                    "mlx5_2", "mlx5_3"}));
  for (const char* hca : {"mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"}) {
    const auto& n = nic(t, hca);
    EXPECT_EQ(n.kind, p::NicKind::InfiniBand) << hca;  // hsi0 is a site name, not Slingshot
    ASSERT_EQ(n.ports.size(), 1u) << hca;
    EXPECT_EQ(n.ports[0].number, 1u);
    EXPECT_EQ(n.ports[0].active, std::string(hca) == "mlx5_0") << hca;
    EXPECT_EQ(n.has_active_port(), std::string(hca) == "mlx5_0") << hca;
  }
  EXPECT_EQ(nic(t, "mlx5_0").ports[0].netdev, "hsi0");
  EXPECT_EQ(nic(t, "mlx5_0").busid, "0000:4d:00.0");
  EXPECT_EQ(nic(t, "mlx5_1").ports[0].netdev, "ibs2f1");
  EXPECT_EQ(nic(t, "mlx5_2").ports[0].netdev, "ibp94s0");
  EXPECT_EQ(nic(t, "mlx5_3").ports[0].netdev, "ibp218s0");
  EXPECT_EQ(nic(t, "eno8303").kind, p::NicKind::Ethernet);
  EXPECT_TRUE(nic(t, "eno8303").ports[0].active);
}

TEST_F(TopologyFile, Ipa20PathsMatchTheReferenceTable) {
  const auto& t = load("ipa20.xml");
  EXPECT_EQ(path(t, "cuda0", "mlx5_0"), p::PathType::PIX);
  EXPECT_EQ(path(t, "cuda0", "mlx5_1"), p::PathType::PIX);
  EXPECT_EQ(path(t, "cuda1", "mlx5_2"), p::PathType::PIX);
  EXPECT_EQ(path(t, "cuda3", "mlx5_3"), p::PathType::PIX);
  EXPECT_EQ(path(t, "cuda0", "mlx5_2"), p::PathType::SYS);
  for (const auto& n : t.nics) EXPECT_EQ(path(t, "cuda2", n.name), p::PathType::SYS) << n.name;
  // cuda2 and mlx5_3 share package 1 but not the SNC domain: SYS, with the package as tie-break.
  EXPECT_EQ(gpu(t, "cuda2").locality.package, nic(t, "mlx5_3").locality.package);
  EXPECT_NE(gpu(t, "cuda2").locality.numa, nic(t, "mlx5_3").locality.numa);
  EXPECT_NE(gpu(t, "cuda0").locality.package, gpu(t, "cuda3").locality.package);
}

TEST_F(TopologyFile, Ipa20GpuCpusAreTheirCoresWithBothHyperthreads) {
  const auto& t = load("ipa20.xml");
  EXPECT_EQ(p::format_cpu_list(gpu(t, "cuda1").locality.cpus), "14-27,126-139");
  const std::map<std::string, std::pair<unsigned, unsigned>> cores = {
      {"cuda0", {42, 55}}, {"cuda1", {14, 27}}, {"cuda2", {98, 111}}, {"cuda3", {70, 83}}};
  for (const auto& [name, range] : cores)
    EXPECT_EQ(gpu(t, name).locality.cpus, pus_of_cores("ipa20.xml", range.first, range.second))
        << name;
  EXPECT_EQ(gpu(t, "cuda0").locality.numa, "3");
  EXPECT_EQ(gpu(t, "cuda1").locality.numa, "1");
}

// ---- 2. tuo: MI300A APUs + Slingshot ------------------------------------------------------

TEST_F(TopologyFile, TuoHasFourRsmiApusAndFourSlingshotNics) {
  const auto& t = load("tuo.SPX.xml");
  EXPECT_EQ(gpu_busids(t), (std::vector<std::string>{"0000:02:00.0", "0001:02:00.0",
                                                      "0002:02:00.0", "0003:02:00.0"}));
  EXPECT_EQ(gpu_names(t), (std::vector<std::string>{"rsmi0", "rsmi1", "rsmi2", "rsmi3"}));
  EXPECT_EQ(t.gpus[0].vendor_id, 0x1002u);
  EXPECT_EQ(t.gpus[0].device_id, 0x74a0u);
  for (unsigned i = 0; i < 4; ++i) {
    const std::string hsi = "hsi" + std::to_string(i);
    const std::string rsmi = "rsmi" + std::to_string(i);
    const auto& n = nic(t, hsi);
    EXPECT_EQ(n.kind, p::NicKind::Slingshot) << hsi;
    EXPECT_FALSE(n.openfabrics());
    ASSERT_EQ(n.ports.size(), 1u);
    EXPECT_TRUE(n.ports[0].active);
    EXPECT_EQ(n.ports[0].netdev, hsi);
    for (unsigned j = 0; j < 4; ++j)
      EXPECT_EQ(path(t, rsmi, "hsi" + std::to_string(j)), i == j ? p::PathType::PHB
                                                                   : p::PathType::SYS);
    EXPECT_EQ(gpu(t, rsmi).locality.cpus, pus_of_cores("tuo.SPX.xml", 24 * i, 24 * i + 23));
    EXPECT_EQ(gpu(t, rsmi).locality.package, static_cast<int>(i));
  }
  EXPECT_EQ(nic(t, "enp129s0").kind, p::NicKind::Ethernet);
}

// ---- 3. coral-lassen: POWER9 + 4x V100 ----------------------------------------------------

TEST_F(TopologyFile, CoralLassenHasFourV100sAndNoAspeed) {
  const auto& t = load("coral-lassen.xml");
  EXPECT_EQ(gpu_busids(t), (std::vector<std::string>{"0004:04:00.0", "0004:05:00.0",
                                                      "0035:03:00.0", "0035:04:00.0"}));
  EXPECT_EQ(gpu_names(t), (std::vector<std::string>{"cuda0", "cuda1", "cuda2", "cuda3"}));
  for (const auto& g : t.gpus) EXPECT_NE(g.vendor_id, 0x1a03u);
  EXPECT_EQ(gpu_path(t, "cuda0", "cuda1"), p::PathType::PIX);
  EXPECT_EQ(gpu_path(t, "cuda2", "cuda3"), p::PathType::PIX);
  EXPECT_EQ(gpu_path(t, "cuda0", "cuda2"), p::PathType::SYS);
}

TEST_F(TopologyFile, CoralLassenHcasAreInfiniBandDespiteHsiNames) {
  const auto& t = load("coral-lassen.xml");
  for (unsigned i = 0; i < 4; ++i) {
    const auto& n = nic(t, "mlx5_" + std::to_string(i));
    EXPECT_EQ(n.kind, p::NicKind::InfiniBand) << n.name;
    ASSERT_EQ(n.ports.size(), 1u);
    EXPECT_TRUE(n.ports[0].active) << n.name;
    EXPECT_EQ(n.ports[0].netdev, "hsi" + std::to_string(i));
    EXPECT_EQ(n.ports[0].link, p::NicKind::InfiniBand);
  }
  EXPECT_EQ(nic(t, "enP5p1s0f0").kind, p::NicKind::Ethernet);
  for (const char* g : {"cuda0", "cuda1"}) {
    EXPECT_EQ(path(t, g, "mlx5_0"), p::PathType::PHB);
    EXPECT_EQ(path(t, g, "mlx5_1"), p::PathType::PHB);
    EXPECT_EQ(path(t, g, "mlx5_2"), p::PathType::SYS);
    EXPECT_EQ(gpu(t, g).locality.cpus, pus_of_cores("coral-lassen.xml", 0, 19));
  }
  for (const char* g : {"cuda2", "cuda3"}) {
    EXPECT_EQ(path(t, g, "mlx5_2"), p::PathType::PHB);
    EXPECT_EQ(path(t, g, "mlx5_3"), p::PathType::PHB);
    EXPECT_EQ(path(t, g, "mlx5_0"), p::PathType::SYS);
    EXPECT_EQ(gpu(t, g).locality.cpus, pus_of_cores("coral-lassen.xml", 20, 39));
  }
}

// ---- 4. g4dn.metal: 8x T4 + EFA ----------------------------------------------------------

TEST_F(TopologyFile, G4dnMetalHasEightT4sAndAnEfaWithoutNetdev) {
  const auto& t = load("g4dnmetal.xml");
  EXPECT_EQ(gpu_busids(t),
            (std::vector<std::string>{"0000:18:00.0", "0000:19:00.0", "0000:35:00.0",
                                      "0000:36:00.0", "0000:e7:00.0", "0000:e8:00.0",
                                      "0000:f4:00.0", "0000:f5:00.0"}));
  for (unsigned i = 0; i < 8; ++i) EXPECT_EQ(t.gpus[i].name, "cuda" + std::to_string(i));
  const auto& efa = nic(t, "rdmap197s0");
  EXPECT_EQ(efa.kind, p::NicKind::Efa);
  EXPECT_TRUE(efa.openfabrics());
  ASSERT_EQ(efa.ports.size(), 1u);
  EXPECT_TRUE(efa.ports[0].active);
  EXPECT_EQ(efa.ports[0].netdev, "");
  EXPECT_EQ(nic(t, "eth0").kind, p::NicKind::Ethernet);
  for (unsigned i = 0; i < 8; ++i) {
    const std::string g = "cuda" + std::to_string(i);
    EXPECT_EQ(path(t, g, "rdmap197s0"), i < 4 ? p::PathType::SYS : p::PathType::PHB) << g;
    EXPECT_EQ(gpu(t, g).locality.cpus,
              i < 4 ? pus_of_cores("g4dnmetal.xml", 0, 23) : pus_of_cores("g4dnmetal.xml", 24, 47))
        << g;
  }
  EXPECT_EQ(gpu_path(t, "cuda0", "cuda1"), p::PathType::PHB);
  EXPECT_EQ(gpu_path(t, "cuda0", "cuda4"), p::PathType::SYS);
}

// ---- 5. eas-tioga: MI250X GCDs + Slingshot without subtype --------------------------------

TEST_F(TopologyFile, EasTiogaMatchesTheReferenceTable) {
  const auto& t = load("eas-tioga.xml");
  EXPECT_EQ(gpu_busids(t),
            (std::vector<std::string>{"0000:c1:00.0", "0000:c6:00.0", "0000:c9:00.0",
                                      "0000:ce:00.0", "0000:d1:00.0", "0000:d6:00.0",
                                      "0000:d9:00.0", "0000:de:00.0"}));
  for (unsigned i = 0; i < 8; ++i) EXPECT_EQ(t.gpus[i].name, "rsmi" + std::to_string(i));
  for (const char* hsi : {"hsi0", "hsi1", "hsi2", "hsi3"}) {
    EXPECT_EQ(nic(t, hsi).kind, p::NicKind::Slingshot) << hsi;
    EXPECT_TRUE(nic(t, hsi).has_active_port());
  }
  EXPECT_EQ(nic(t, "ens2").kind, p::NicKind::Ethernet);
  EXPECT_EQ(p::format_cpu_list(gpu(t, "rsmi0").locality.cpus), "48-55,112-119");
  struct Row {
    const char* gcd;
    unsigned first_core;
    const char* nearest;
  };
  for (const Row& row : {Row{"rsmi0", 48, "hsi0"}, Row{"rsmi1", 56, "hsi0"},
                         Row{"rsmi2", 16, "hsi1"}, Row{"rsmi3", 24, "hsi1"},
                         Row{"rsmi4", 0, "hsi2"}, Row{"rsmi5", 8, "hsi2"},
                         Row{"rsmi6", 32, "hsi3"}, Row{"rsmi7", 40, "hsi3"}}) {
    SCOPED_TRACE(row.gcd);
    EXPECT_EQ(gpu(t, row.gcd).locality.cpus,
              pus_of_cores("eas-tioga.xml", row.first_core, row.first_core + 7));
    for (const char* hsi : {"hsi0", "hsi1", "hsi2", "hsi3"})
      EXPECT_EQ(path(t, row.gcd, hsi), std::string(hsi) == row.nearest ? p::PathType::PHB
                                                                        : p::PathType::SYS)
          << hsi;
  }
  EXPECT_EQ(path(t, "rsmi4", "ens2"), p::PathType::PHB);
  EXPECT_EQ(path(t, "rsmi5", "ens2"), p::PathType::PHB);
  EXPECT_EQ(path(t, "rsmi0", "ens2"), p::PathType::SYS);
}

// ---- 6. arm64-ulna: AMD GPUs seen only through DRM, ASPEED trap ---------------------------

TEST_F(TopologyFile, Arm64UlnaHasTwoAmdGpusFromDrmAndNoAspeed) {
  const auto& t = load("arm64-ulna-hwloc1.xml");
  EXPECT_EQ(gpu_busids(t), (std::vector<std::string>{"0000:02:00.0", "0000:82:00.0"}));
  EXPECT_EQ(gpu_names(t), (std::vector<std::string>{"card1", "card2"}));
  for (const auto& g : t.gpus) {
    EXPECT_EQ(g.vendor_id, 0x1002u);
    EXPECT_EQ(g.device_id, 0x67a0u);
  }
  EXPECT_EQ(gpu(t, "card1").locality.cpus, pus_of_cores("arm64-ulna-hwloc1.xml", 0, 31));
  EXPECT_EQ(gpu(t, "card2").locality.cpus, pus_of_cores("arm64-ulna-hwloc1.xml", 32, 63));
}

TEST_F(TopologyFile, Arm64UlnaHasIbAndRoceHcasWithMlx52Down) {
  const auto& t = load("arm64-ulna-hwloc1.xml");
  EXPECT_EQ(nic_names(t), (std::vector<std::string>{"mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"}));
  EXPECT_EQ(nic(t, "mlx5_0").kind, p::NicKind::InfiniBand);
  EXPECT_EQ(nic(t, "mlx5_3").kind, p::NicKind::InfiniBand);
  EXPECT_EQ(nic(t, "mlx5_1").kind, p::NicKind::RoCE);
  EXPECT_EQ(nic(t, "mlx5_2").kind, p::NicKind::RoCE);
  EXPECT_TRUE(nic(t, "mlx5_1").has_active_port());
  EXPECT_FALSE(nic(t, "mlx5_2").has_active_port());
  EXPECT_EQ(nic(t, "mlx5_1").ports[0].netdev, "enp22s0f0");
  EXPECT_EQ(nic(t, "mlx5_2").ports[0].netdev, "enp22s0f1");
  EXPECT_EQ(path(t, "card1", "mlx5_0"), p::PathType::PHB);
  EXPECT_EQ(path(t, "card1", "mlx5_1"), p::PathType::PHB);
  EXPECT_EQ(path(t, "card1", "mlx5_3"), p::PathType::SYS);
  EXPECT_EQ(path(t, "card2", "mlx5_3"), p::PathType::PHB);
  EXPECT_EQ(path(t, "card2", "mlx5_0"), p::PathType::SYS);
}

// ---- 7. 24em64t: GPUs with no OS devices, ES1000 trap, VPI HCA -----------------------------

TEST_F(TopologyFile, Em64tFindsThreeNvidiaGpusByPciClassAndNotTheEs1000) {
  const auto& t = load("24em64t-2n6c2t-pci.xml");
  EXPECT_EQ(gpu_busids(t),
            (std::vector<std::string>{"0000:06:00.0", "0000:11:00.0", "0000:14:00.0"}));
  for (const auto& g : t.gpus) {
    EXPECT_EQ(g.name, "");
    EXPECT_EQ(g.vendor_id, 0x10deu);
    EXPECT_EQ(g.device_id, 0x06d2u);
  }
  // Interleaved numbering: socket 0 holds the even PUs.
  EXPECT_EQ(p::format_cpu_list(t.gpus[0].locality.cpus), "0,2,4,6,8,10,12,14,16,18,20,22");
}

TEST_F(TopologyFile, Em64tVpiHcaHasAnIbAndAnEthernetPort) {
  const auto& t = load("24em64t-2n6c2t-pci.xml");
  EXPECT_EQ(nic_names(t), (std::vector<std::string>{"eth0", "eth1", "mlx4_0"}));
  const auto& hca = nic(t, "mlx4_0");
  EXPECT_EQ(hca.kind, p::NicKind::InfiniBand);
  ASSERT_EQ(hca.ports.size(), 2u);
  EXPECT_EQ(hca.ports[0].netdev, "ib0");
  EXPECT_EQ(hca.ports[0].link, p::NicKind::InfiniBand);
  EXPECT_EQ(hca.ports[1].netdev, "eth2");
  EXPECT_EQ(hca.ports[1].link, p::NicKind::RoCE);
  EXPECT_TRUE(hca.ports[0].active);  // the export has no port states
  EXPECT_EQ(nic(t, "eth0").kind, p::NicKind::Ethernet);
  EXPECT_EQ(path(t, "0000:06:00.0", "mlx4_0"), p::PathType::PHB);
  EXPECT_EQ(path(t, "0000:11:00.0", "mlx4_0"), p::PathType::SYS);
  EXPECT_EQ(path(t, "0000:14:00.0", "mlx4_0"), p::PathType::SYS);
}

// ---- 8. DGX-2: 16 V100 by NVML name, 12 NVSwitches to drop --------------------------------

TEST_F(TopologyFile, NvidiaDgx2HasSixteenGpusAndNoNvSwitch) {
  const auto& t = load("nvidiaDGX2.xml");
  ASSERT_EQ(t.gpus.size(), 16u);
  for (unsigned i = 0; i < 16; ++i) {
    EXPECT_EQ(t.gpus[i].name, "nvml" + std::to_string(i));
    EXPECT_EQ(t.gpus[i].device_id, 0x1db8u);
  }
  EXPECT_EQ(t.gpus.front().busid, "0000:34:00.0");
  EXPECT_EQ(t.gpus.back().busid, "0000:e7:00.0");
  EXPECT_TRUE(t.nics.empty());
}

TEST_F(TopologyFile, NvidiaDgx2GpuPairsFollowNvidiaSmiTopo) {
  const auto& t = load("nvidiaDGX2.xml");
  // nvml0-7 on socket 0, 8-15 on socket 1; pairs behind one switch, fours behind a second
  // level, two trees per socket.
  for (unsigned i = 0; i < 16; ++i)
    for (unsigned j = 0; j < 16; ++j) {
      if (i == j) continue;
      p::PathType want = p::PathType::SYS;
      if (i / 2 == j / 2)
        want = p::PathType::PIX;
      else if (i / 4 == j / 4)
        want = p::PathType::PXB;
      else if (i / 8 == j / 8)
        want = p::PathType::PHB;
      EXPECT_EQ(p::path_between(t.gpus[i].locality, t.gpus[j].locality), want)
          << "nvml" << i << " - nvml" << j;
    }
  EXPECT_EQ(gpu_path(t, "0000:34:00.0", "0000:36:00.0"), p::PathType::PIX);
  EXPECT_EQ(gpu_path(t, "0000:39:00.0", "0000:3b:00.0"), p::PathType::PIX);
}

}  // namespace
