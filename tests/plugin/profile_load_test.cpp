// Loading by name and following `extends`: child values win, env maps merge, node lists are
// replaced, names are never paths, self-extension and cycles are errors.
#include <gtest/gtest.h>

#include "profile.hpp"
#include "profile_test_util.hpp"

namespace p = ddp::plan;
using profile_test::error_of;
using profile_test::TempDir;

namespace {

const char* kBase = R"(name: base
description: the base
match: {cluster: c}
rendezvous: {port_range: [15000, 15999], host_suffix: "-ib"}
network: {socket_interfaces: [ib0], transport: ib, hca: list, hca_list: [mlx5_0:1]}
binding: {cpus: closest}
env: {A: "1", B: "2"}
nodes:
  - {match: "n1", network: {socket_interfaces: [eth1]}}
)";

}  // namespace

TEST(ProfileLoad, ChildValuesOverrideAndEnvMapsMerge) {
  TempDir dir;
  const std::string base = dir.write("base.yaml", kBase);
  const std::string child = dir.write("child.yaml", R"(name: child
extends: base
network: {socket_interfaces: [ib1], hca: nearest}
env: {B: {value: "3", force: true}, C: "4"}
)");
  const p::Profile c = p::load_profile(dir.path(), "child");
  EXPECT_EQ(c.name, "child");
  EXPECT_EQ(c.description, "the base");
  EXPECT_EQ(c.files, (std::vector<std::string>{child, base}));
  EXPECT_TRUE(c.match.empty());  // match is never inherited
  ASSERT_TRUE(c.port_range);
  EXPECT_EQ(c.port_range->low, 15000);
  EXPECT_EQ(c.host_suffix, "-ib");
  EXPECT_EQ(c.settings.socket_interfaces, std::vector<std::string>{"ib1"});
  EXPECT_EQ(c.settings.transport, p::Transport::Ib);
  EXPECT_EQ(c.settings.hca, p::HcaMode::Nearest);
  EXPECT_TRUE(c.settings.hca_list.empty());  // the list went with the parent's hca: list
  EXPECT_EQ(c.settings.bind, p::Bind::Closest);
  ASSERT_EQ(c.settings.env.size(), 3u);
  EXPECT_EQ(c.settings.env[0].name, "A");
  EXPECT_EQ(c.settings.env[1].name, "B");
  EXPECT_EQ(c.settings.env[1].value, "3");
  EXPECT_TRUE(c.settings.env[1].forced);
  EXPECT_EQ(c.settings.env[2].name, "C");
  ASSERT_EQ(c.nodes.size(), 1u);  // inherited: the child has no nodes
  EXPECT_EQ(c.nodes[0].match, "n1");
}

TEST(ProfileLoad, ChildNodesReplaceTheParents) {
  TempDir dir;
  dir.write("base.yaml", kBase);
  dir.write("child.yaml",
            "name: child\nextends: base\nnodes:\n  - {match: 'n[2-3]', binding: {cpus: none}}\n");
  dir.write("bare.yaml", "name: bare\nextends: base\nnodes: []\n");
  const p::Profile c = p::load_profile(dir.path(), "child");
  ASSERT_EQ(c.nodes.size(), 1u);
  EXPECT_EQ(c.nodes[0].match, "n[2-3]");
  EXPECT_TRUE(p::load_profile(dir.path(), "bare").nodes.empty());
}

TEST(ProfileLoad, ChainsApplyFromTheFarthestParent) {
  TempDir dir;
  dir.write("a.yaml", "name: a\nenv: {X: a, Y: a}\nbinding: {cpus: none}\n");
  dir.write("b.yaml", "name: b\nextends: a\nenv: {Y: b, Z: b}\n");
  dir.write("c.yaml", "name: c\nextends: b\nenv: {Z: c}\nbinding: {cpus: closest}\n");
  const p::Profile c = p::load_profile(dir.path(), "c");
  EXPECT_EQ(c.files.size(), 3u);
  EXPECT_EQ(c.settings.bind, p::Bind::Closest);
  ASSERT_EQ(c.settings.env.size(), 3u);
  EXPECT_EQ(c.settings.env[0].value, "a");
  EXPECT_EQ(c.settings.env[1].value, "b");
  EXPECT_EQ(c.settings.env[2].value, "c");
}

TEST(ProfileLoad, SelfExtensionAndCyclesAreErrors) {
  TempDir dir;
  const std::string self = dir.write("self.yaml", "name: self\nextends: self\n");
  std::string e = error_of([&] { p::load_profile(dir.path(), "self"); });
  EXPECT_NE(e.find(self + ":2:10: profile 'self' extends itself. Fix: name the profile it builds "
                          "on, or delete extends"),
            std::string::npos)
      << e;
  dir.write("a.yaml", "name: a\nextends: b\n");
  dir.write("b.yaml", "name: b\nextends: c\n");
  const std::string c = dir.write("c.yaml", "name: c\nextends: a\n");
  e = error_of([&] { p::load_profile(dir.path(), "a"); });
  EXPECT_NE(e.find(c + ":2:10: extends 'a' closes a cycle: a -> b -> c -> a. Fix: let one profile "
                       "of the cycle extend none of the others"),
            std::string::npos)
      << e;
}

TEST(ProfileLoad, AMissingParentListsWhatExists) {
  TempDir dir;
  dir.write("base.yaml", kBase);
  const std::string child = dir.write("child.yaml", "name: child\nextends: bsae\n");
  const std::string e = error_of([&] { p::load_profile(dir.path(), "child"); });
  EXPECT_NE(e.find(child + ":2:10: extends 'bsae', but " + dir.path() +
                   " has no bsae.yaml; available: base, child. Fix: name one of them"),
            std::string::npos)
      << e;
}

TEST(ProfileLoad, NamesAreNeverPaths) {
  TempDir dir;
  dir.write("base.yaml", kBase);
  std::string e = error_of([&] { p::load_profile(dir.path(), "../etc/passwd"); });
  EXPECT_NE(e.find("profile='../etc/passwd' is not a profile name"), std::string::npos) << e;
  EXPECT_NE(
      e.find("(a name, not a path). Fix: use one of the profiles in " + dir.path() + ": base"),
      std::string::npos)
      << e;
  const std::string child = dir.write("child.yaml", "name: child\nextends: ../base\n");
  e = error_of([&] { p::load_profile(dir.path(), "child"); });
  EXPECT_NE(e.find(child + ":2:10: extends='../base' is not a profile name"), std::string::npos)
      << e;
  e = error_of([&] { p::load_profile(dir.path(), "nope"); });
  EXPECT_NE(e.find("profile='nope' names no profile in " + dir.path() +
                   "; available: base, child. Fix: use one of them"),
            std::string::npos)
      << e;
}

TEST(ProfileLoad, AFileByPathExtendsFromItsOwnDirectory) {
  TempDir dir;
  dir.write("base.yaml", kBase);
  const std::string mine = dir.write("mine.yaml", "name: mine\nextends: base\n");
  const p::Profile m = p::load_profile_file(mine);
  EXPECT_EQ(m.name, "mine");
  EXPECT_EQ(m.settings.transport, p::Transport::Ib);
}

TEST(ProfileLoad, ListsProfilesSortedAndSkipsOtherFiles) {
  TempDir dir;
  dir.write("zeta.yaml", "name: zeta\n");
  dir.write("alpha.yaml", "name: alpha\n");
  dir.write(".hidden.yaml", "name: hidden\n");
  dir.write("notes.txt", "x");
  dir.write("alpha.yaml.rpmnew", "x");
  dir.write("alpha.yaml~", "x");
  EXPECT_EQ(p::list_profiles(dir.path()), (std::vector<std::string>{"alpha", "zeta"}));
  EXPECT_TRUE(p::list_profiles(dir.path() + "/missing").empty());
  dir.write("bad name.yaml", "name: x\n");
  const std::string e = error_of([&] { p::list_profiles(dir.path()); });
  EXPECT_NE(e.find(dir.path() + "/bad name.yaml: the file name='bad name' is not a profile name"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("Fix: rename the file, or move it out of " + dir.path()), std::string::npos)
      << e;
}
