// Slurm's core ids -> OS CPUs on the recorded topologies. Expected CPUs come from
// `hwloc-calc --input FILE -I pu --po core:N` (hwloc's own answer), not from the code under test.
#include "core_grant.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include "placement.hpp"

namespace p = ddp::plan;

namespace {

const p::Topology& topology(const std::string& file) {
  static std::map<std::string, p::Topology> cache;
  auto it = cache.find(file);
  if (it == cache.end())
    it = cache.emplace(file, p::load_topology((std::filesystem::path(DDP_TOPOLOGY_DIR) / file).string()))
             .first;
  return it->second;
}

p::CpuGrant grant(const std::string& file, const std::string& ids, unsigned cpus,
                  const p::CpuList& within = {}) {
  return p::grant_from_cores(topology(file), ids, cpus, within);
}

bool mentions(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST(CoreGrant, SmtCoresBringAllTheirThreadsEvenWithScatteredOsNumbers) {
  // 2 sockets x 6 cores x 2 threads; socket 0 holds the even OS CPUs, socket 1 the odd ones.
  const auto g = grant("24em64t-2n6c2t-pci.xml", "0,2", 4);
  EXPECT_EQ(g.problem, "");
  EXPECT_EQ(g.cpus, (p::CpuList{0, 4, 12, 16}));
  // Core 6 is socket 1's first core: Slurm numbers socket by socket.
  EXPECT_EQ(grant("24em64t-2n6c2t-pci.xml", "6", 2).cpus, (p::CpuList{1, 13}));
}

TEST(CoreGrant, WithoutSmtACoreIsOneCpu) {
  // nvidiaDGX2.xml: 2 sockets, 4 cores, 1 thread each: OS CPUs 0, 1 | 24, 25.
  EXPECT_EQ(grant("nvidiaDGX2.xml", "1-2", 2).cpus, (p::CpuList{1, 24}));
  EXPECT_EQ(grant("nvidiaDGX2.xml", "3", 1).cpus, (p::CpuList{25}));
}

TEST(CoreGrant, FourSocketsAndOneSocket) {
  EXPECT_EQ(grant("tuo.SPX.xml", "24", 2).cpus, (p::CpuList{24, 120}));  // socket 1's first core
  EXPECT_EQ(grant("tuo.SPX.xml", "95", 2).cpus, (p::CpuList{95, 191}));  // socket 3's last
  EXPECT_EQ(grant("eas-tioga.xml", "63", 2).cpus, (p::CpuList{63, 127}));
  EXPECT_EQ(grant("ipa20.xml", "56", 2).cpus, (p::CpuList{56, 168}));
  // Four threads per core (POWER-like, hwloc 1 export).
  EXPECT_EQ(grant("arm64-ulna-hwloc1.xml", "32", 4).cpus, (p::CpuList{128, 160, 192, 224}));
}

TEST(CoreGrant, TwoStepsOnOneNodeGetDisjointCpus) {
  const auto a = grant("g4dnmetal.xml", "0-1", 4), b = grant("g4dnmetal.xml", "2,24", 4);
  EXPECT_EQ(a.cpus, (p::CpuList{0, 1, 48, 49}));
  EXPECT_EQ(b.cpus, (p::CpuList{2, 24, 50, 72}));
}

TEST(CoreGrant, MoreCoresInSlurmConfThanInTheHardwareAreNotTrusted) {
  // The test cluster's default: slurm.conf advertises 8 cores on a smaller machine.
  const auto g = grant("nvidiaDGX2.xml", "0,5", 2);
  EXPECT_TRUE(g.cpus.empty());
  EXPECT_TRUE(mentions(g.problem, "go up to core 5 but hwloc finds 4 core(s)")) << g.problem;
  EXPECT_TRUE(mentions(g.problem, "slurmd -C")) << g.problem;
}

TEST(CoreGrant, ThreadsPerCoreThatDiffersFromTheHardwareIsNotTrusted) {
  // slurm.conf says ThreadsPerCore=1 on an SMT-2 node: Slurm counts 2 CPUs for 2 cores, which are
  // 4 hardware threads; its ids then mean other CPUs than these.
  const auto g = grant("eas-tioga.xml", "0-1", 2);
  EXPECT_TRUE(g.cpus.empty());
  EXPECT_TRUE(mentions(g.problem, "are CPUs 0-1,64-65 (4) but Slurm counts 2 CPU(s)")) << g.problem;
}

TEST(CoreGrant, ATopologyThatHidesCoresIsNotTrusted) {
  // coral-lassen.xml was exported inside a cpuset that hides 4 of its 44 cores: every core id
  // after the hidden ones would be off.
  EXPECT_TRUE(topology("coral-lassen.xml").cores.empty());
  const auto g = grant("coral-lassen.xml", "0", 4);
  EXPECT_TRUE(mentions(g.problem, "does not show every core")) << g.problem;
}

TEST(CoreGrant, SlurmstepdsCpusetNarrowsTheGrant) {
  EXPECT_EQ(grant("24em64t-2n6c2t-pci.xml", "0,2", 4, {0, 1, 2, 3, 4}).cpus, (p::CpuList{0, 4}));
  const auto g = grant("24em64t-2n6c2t-pci.xml", "0", 2, {1, 3});
  EXPECT_TRUE(g.cpus.empty());
  EXPECT_TRUE(mentions(g.problem, "none of which slurmstepd may run on (1,3)")) << g.problem;
}

TEST(CoreGrant, UnreadableOrEmptyIdsAreAProblemNotTheWholeNode) {
  EXPECT_TRUE(mentions(grant("ipa20.xml", "0-x", 1).problem, "cannot read Slurm's core ids"));
  EXPECT_TRUE(mentions(grant("ipa20.xml", "3-1", 1).problem, "runs backwards"));
  EXPECT_TRUE(mentions(grant("ipa20.xml", "", 1).problem, "names no core"));
}

TEST(CoreGrant, StepFactsTakeTheGrantOrKeepTheProblem) {
  p::StepFacts f;
  f.topology = topology("g4dnmetal.xml");
  f.cpus_on_node = 2;
  const p::CpuList node = f.topology->cpus;
  p::apply_core_grant(f, node);  // no core ids (ddp-plan without --alloc-cores): as before
  EXPECT_EQ(f.allowed_cpus, node);
  EXPECT_EQ(f.cpu_grant_problem, "");

  f.alloc_cores = "1";
  p::apply_core_grant(f, node);
  EXPECT_EQ(f.allowed_cpus, (p::CpuList{1, 49}));
  EXPECT_EQ(f.cpu_grant_problem, "");

  f.alloc_cores = "99";
  p::apply_core_grant(f, node);
  EXPECT_FALSE(f.cpu_grant_problem.empty());
  EXPECT_EQ(f.allowed_cpus, node);  // what the planner must not bind to: it binds nothing

  f.topology.reset();
  f.alloc_cores = "1";
  p::apply_core_grant(f, node);
  EXPECT_TRUE(mentions(f.cpu_grant_problem, "without the node topology"));
}

TEST(CoreGrant, AnUntrustedGrantBindsNoRankAndSaysWhy) {
  p::PlacementRequest req;
  req.local_tasks = 2;
  req.cpu_grant_problem = "Slurm's core ids '7' go up to core 7";
  const auto out = p::place_ranks(topology("nvidiaDGX2.xml"), p::NetFacts{}, req);
  EXPECT_TRUE(out.ranks[0].cpus.empty());
  EXPECT_TRUE(out.ranks[1].cpus.empty());
  bool said = false;
  for (const auto& w : out.warnings)
    said = said || mentions(w, "each task keeps the CPUs Slurm bound it to");
  EXPECT_TRUE(said);
  // --ddp-bind=none binds nothing anyway: nothing to warn about.
  req.bind = p::Bind::None;
  for (const auto& w : p::place_ranks(topology("nvidiaDGX2.xml"), p::NetFacts{}, req).warnings)
    EXPECT_FALSE(mentions(w, "Slurm bound it to")) << w;
}

TEST(CoreGrant, ClosestPicksGpuCoresAmongTheGrantOnlyAndNamesThoseItMissed) {
  // ipa20.xml: GPU 0 (0000:4e:00.0) sits next to cores 42-55 (OS CPUs 42-55,154-167).
  const p::Topology& topo = topology("ipa20.xml");
  p::PlacementRequest req;
  req.step_gpus = {0};
  req.allowed_cpus = grant("ipa20.xml", "40-43", 8).cpus;
  auto out = p::place_ranks(topo, p::NetFacts{}, req);
  EXPECT_EQ(out.ranks[0].cpus, (p::CpuList{42, 43, 154, 155}));

  // A step whose cores are all far from its GPU keeps its own CPUs and is told which it missed.
  req.allowed_cpus = grant("ipa20.xml", "100-101", 4).cpus;
  out = p::place_ranks(topo, p::NetFacts{}, req);
  EXPECT_EQ(out.ranks[0].cpus, (p::CpuList{100, 101, 212, 213}));
  bool named = false;
  for (const auto& w : out.warnings)
    named = named || mentions(w, "GPU 0000:4e:00.0 (42-55,154-167) are not among the step's CPUs "
                                 "(100-101,212-213)");
  EXPECT_TRUE(named);
}

TEST(CoreGrant, AStepCpusetHidingCoresIsTheGrantItself) {
  // task/cgroup with ConstrainCores=yes: slurmstepd runs in the step's cpuset, a live hwloc load
  // then hides every other core (as coral-lassen.xml hides 4), and the ids cannot be mapped. An
  // affinity of exactly the step's CPU count is that cpuset.
  p::StepFacts f;
  f.topology = topology("coral-lassen.xml");
  f.alloc_cores = "0";
  f.cpus_on_node = 4;
  p::apply_core_grant(f, {8, 9, 10, 11});
  EXPECT_EQ(f.cpu_grant_problem, "");
  EXPECT_EQ(f.allowed_cpus, (p::CpuList{8, 9, 10, 11}));
  // A wider affinity (slurmd confined to the node's non-system cores, task/affinity alone) is
  // not the step's: nothing is bound.
  p::apply_core_grant(f, {8, 9, 10, 11, 12, 13, 14, 15});
  EXPECT_TRUE(mentions(f.cpu_grant_problem, "does not show every core"));
}

TEST(CoreGrant, RanksSharingAGrantGetWholeCoresNotOneThreadOfEach) {
  // g4dnmetal.xml numbers core c's threads c and c+48: two ranks on cores 0-1 get a core each.
  p::PlacementRequest req;
  req.local_tasks = 2;
  req.allowed_cpus = grant("g4dnmetal.xml", "0-1", 4).cpus;
  const auto out = p::place_ranks(topology("g4dnmetal.xml"), p::NetFacts{}, req);
  EXPECT_EQ(out.ranks[0].cpus, (p::CpuList{0, 48}));
  EXPECT_EQ(out.ranks[1].cpus, (p::CpuList{1, 49}));
}
