// Which profile a step gets: --ddp-profile, then plugstack.conf's default, then the most specific
// `match`; ties and unknown names are errors that say what exists.
#include <gtest/gtest.h>

#include "profile.hpp"
#include "profile_test_util.hpp"

namespace p = ddp::plan;
using profile_test::error_of;
using profile_test::TempDir;

namespace {

const std::optional<std::string> kNone;

void write_site(const TempDir& dir) {
  dir.write("vega.yaml", "name: vega\nmatch: {cluster: vega, nodes: 'gn[001-060]'}\n");
  dir.write("vega-any.yaml", "name: vega-any\nmatch: {cluster: vega}\n");
  dir.write("lab.yaml", "name: lab\nmatch: {nodes: 'node[01-06]'}\n");
  dir.write("base.yaml", "name: base\nbinding: {cpus: none}\n");
}

}  // namespace

TEST(ProfileSelect, RequestedWinsOverDefaultAndMatching) {
  TempDir dir;
  write_site(dir);
  const p::ProfileChoice c =
      p::select_profile(dir.path(), std::string("base"), std::string("lab"), "vega", "gn012");
  ASSERT_TRUE(c.profile);
  EXPECT_EQ(c.profile->name, "base");
  EXPECT_EQ(c.reason, "--ddp-profile=base");
}

TEST(ProfileSelect, PlugstackDefaultWinsOverMatching) {
  TempDir dir;
  write_site(dir);
  const p::ProfileChoice c =
      p::select_profile(dir.path(), kNone, std::string("lab"), "vega", "gn012");
  ASSERT_TRUE(c.profile);
  EXPECT_EQ(c.profile->name, "lab");
  EXPECT_EQ(c.reason, "plugstack default_profile=lab");
}

TEST(ProfileSelect, UnknownNamesListTheAvailableProfiles) {
  TempDir dir;
  write_site(dir);
  std::string e =
      error_of([&] { p::select_profile(dir.path(), std::string("vgea"), kNone, "vega", "gn012"); });
  EXPECT_NE(e.find("--ddp-profile='vgea' names no profile in " + dir.path() +
                   "; available: base, lab, vega, vega-any. Fix: use one of them"),
            std::string::npos)
      << e;
  e = error_of([&] { p::select_profile(dir.path(), kNone, std::string("x"), "vega", "gn012"); });
  EXPECT_NE(e.find("plugstack.conf default_profile='x' names no profile"), std::string::npos) << e;
  e = error_of([&] { p::select_profile(dir.path(), std::string("/etc/x"), kNone, kNone, "n"); });
  EXPECT_NE(e.find("--ddp-profile='/etc/x' is not a profile name"), std::string::npos) << e;
}

TEST(ProfileSelect, ClusterAndNodesBeatClusterAlone) {
  TempDir dir;
  write_site(dir);
  p::ProfileChoice c = p::select_profile(dir.path(), kNone, kNone, "vega", "gn012");
  ASSERT_TRUE(c.profile);
  EXPECT_EQ(c.profile->name, "vega");
  EXPECT_EQ(c.reason, "matched cluster vega and node gn012 (gn[001-060])");
  c = p::select_profile(dir.path(), kNone, kNone, "vega", "login1");
  ASSERT_TRUE(c.profile);
  EXPECT_EQ(c.profile->name, "vega-any");
  EXPECT_EQ(c.reason, "matched cluster vega");
  c = p::select_profile(dir.path(), kNone, kNone, "lab", "node03");
  ASSERT_TRUE(c.profile);
  EXPECT_EQ(c.profile->name, "lab");
  EXPECT_EQ(c.reason, "matched node node03 (node[01-06])");
}

TEST(ProfileSelect, NoMatchMeansBuiltInDefaults) {
  TempDir dir;
  write_site(dir);
  p::ProfileChoice c = p::select_profile(dir.path(), kNone, kNone, "other", "x1");
  EXPECT_FALSE(c.profile);
  EXPECT_EQ(c.reason, "no profile matched: built-in defaults");
  // Without SLURM_CLUSTER_NAME a cluster match cannot fit.
  c = p::select_profile(dir.path(), kNone, kNone, kNone, "gn012");
  EXPECT_FALSE(c.profile);
  // A profile without match is used by name only, never automatically.
  TempDir plain;
  plain.write("base.yaml", "name: base\n");
  EXPECT_FALSE(p::select_profile(plain.path(), kNone, kNone, "vega", "gn012").profile);
  EXPECT_FALSE(p::select_profile(plain.path() + "/missing", kNone, kNone, "vega", "n").profile);
}

TEST(ProfileSelect, EquallySpecificMatchesAreAnErrorNamingBoth) {
  TempDir dir;
  const std::string a = dir.write("a.yaml", "name: a\nmatch: {cluster: vega}\n");
  const std::string b = dir.write("b.yaml", "name: b\nmatch: {nodes: 'gn[001-002]'}\n");
  const std::string e =
      error_of([&] { p::select_profile(dir.path(), kNone, kNone, "vega", "gn001"); });
  EXPECT_NE(e.find("profiles 'a' (matched cluster vega, " + a +
                   ":2:8) and 'b' (matched node "
                   "gn001 (gn[001-002]), " +
                   b + ":2:8) match this node equally well"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("Fix: give one both cluster and nodes"), std::string::npos) << e;
  EXPECT_NE(e.find("default_profile=NAME in plugstack.conf or --ddp-profile=NAME"),
            std::string::npos)
      << e;
  // A node only one of them lists is no tie.
  EXPECT_EQ(p::select_profile(dir.path(), kNone, kNone, "vega", "gn003").profile->name, "a");
}

TEST(ProfileSelect, ABrokenProfileInTheDirectoryIsReportedNotSkipped) {
  TempDir dir;
  write_site(dir);
  const std::string broken = dir.write("broken.yaml", "name: broken\nmatch: {clster: vega}\n");
  const std::string e =
      error_of([&] { p::select_profile(dir.path(), kNone, kNone, "vega", "gn1"); });
  EXPECT_NE(e.find(broken + ":2:9: 'clster' is not a key of match"), std::string::npos) << e;
}
