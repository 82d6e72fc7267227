// What finding a profile may cost: `extends` depth, files and bytes per step, one listing of the
// directory; a hostile chain fails at once with the file and the fix.
#include <gtest/gtest.h>

#include <sys/resource.h>

#include <chrono>
#include <string>

#include "profile.hpp"
#include "profile_detail.hpp"
#include "profile_test_util.hpp"

namespace p = ddp::plan;
using profile_test::error_of;
using profile_test::TempDir;

namespace {

// p0 extends p1 ... extends p(n-1); the last extends nothing.
void write_chain(const TempDir& dir, unsigned n) {
  for (unsigned i = 0; i < n; ++i) {
    std::string text = "name: p" + std::to_string(i) + "\n";
    if (i + 1 < n) text += "extends: p" + std::to_string(i + 1) + "\n";
    text += "env: {V" + std::to_string(i) + ": \"" + std::to_string(i) + "\"}\n";
    dir.write("p" + std::to_string(i) + ".yaml", text);
  }
}

}  // namespace

TEST(ProfileLimits, SixteenLevelsOfExtendsLoad) {
  TempDir dir;
  write_chain(dir, p::profile_detail::kMaxExtendsDepth + 1);
  const p::Profile p0 = p::load_profile(dir.path(), "p0");
  EXPECT_EQ(p0.files.size(), p::profile_detail::kMaxExtendsDepth + 1);
  EXPECT_EQ(p0.settings.env.size(), p::profile_detail::kMaxExtendsDepth + 1);
  EXPECT_EQ(p0.settings.env.front().name, "V16");  // the parent's variables keep their place
}

TEST(ProfileLimits, SeventeenLevelsAreAnErrorNamingTheFileAndTheFix) {
  TempDir dir;
  write_chain(dir, p::profile_detail::kMaxExtendsDepth + 2);
  const std::string e = error_of([&] { p::load_profile(dir.path(), "p0"); });
  EXPECT_NE(e.find(dir.path() + "/p16.yaml:2:10: extends 'p17'"), std::string::npos) << e;
  EXPECT_NE(e.find("more than 16 levels of extends above 'p0'"), std::string::npos) << e;
  EXPECT_NE(e.find("Fix: build on fewer profiles"), std::string::npos) << e;
}

// The reproduction of the issue: 20,001 profiles in one chain. Before the limit, the chain was
// copied and the directory listed again at every level (minutes, and a drained node).
TEST(ProfileLimits, ATwentyThousandDeepChainFailsAtOnce) {
  TempDir dir;
  write_chain(dir, 20001);
  const auto start = std::chrono::steady_clock::now();
  const std::string e = error_of([&] { p::load_profile_file(dir.path() + "/p0.yaml"); });
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_NE(e.find("more than 16 levels of extends"), std::string::npos) << e;
  EXPECT_LT(e.size(), 2000u);  // the message names the chain, bounded by the limit
  EXPECT_LT(s, 10.0);          // one listing of 20,001 names, 17 files read
}

TEST(ProfileLimits, EachFileIsReadOncePerStep) {
  TempDir dir;
  write_chain(dir, 3);
  p::profile_detail::ProfileShelf shelf = p::profile_detail::ProfileShelf::directory(dir.path());
  const auto& first = shelf.file("p0");
  (void)p::profile_detail::load_chain(first, shelf);
  // Deleting the files now changes nothing: the shelf read each one already.
  std::filesystem::remove_all(dir.path());
  std::filesystem::create_directories(dir.path());
  const p::Profile again = p::profile_detail::load_chain(shelf.file("p0"), shelf);
  EXPECT_EQ(again.files.size(), 3u);
  EXPECT_TRUE(shelf.has("p2"));  // listed once, when first asked
}

TEST(ProfileLimits, AStepReadsAtMostSoManyFiles) {
  TempDir dir;
  const unsigned n = p::profile_detail::kMaxProfileFilesPerStep + 1;
  for (unsigned i = 0; i < n; ++i)
    dir.write("m" + std::to_string(i) + ".yaml",
              "name: m" + std::to_string(i) + "\nmatch: {cluster: c" + std::to_string(i) + "}\n");
  // Matching reads every profile of the directory.
  const std::string e = error_of(
      [&] { p::select_profile(dir.path(), std::nullopt, std::nullopt, std::string("x"), "n1"); });
  EXPECT_NE(e.find("would read more than 256 profile files"), std::string::npos) << e;
  EXPECT_NE(e.find("Fix: keep fewer profiles in " + dir.path()), std::string::npos) << e;
}

TEST(ProfileLimits, CyclesStillNameEveryProfileOfTheCycle) {
  TempDir dir;
  dir.write("a.yaml", "name: a\nextends: b\n");
  dir.write("b.yaml", "name: b\nextends: c\n");
  dir.write("c.yaml", "name: c\nextends: a\n");
  const std::string e = error_of([&] { p::load_profile(dir.path(), "a"); });
  EXPECT_NE(e.find("closes a cycle: a -> b -> c -> a"), std::string::npos) << e;
}

// A few kilobytes of host list can name 131,072 hosts of a thousand characters each (2.4 GiB
// expanded, per file, in root on every node): lists stay text, and a node is looked up in them.
TEST(ProfileLimits, HostListsAreMatchedWithoutExpandingThem) {
  TempDir dir;
  const std::string a(1000, 'a'), b(1000, 'b');
  // Two lists of 65,536 hosts: the most one file may name.
  dir.write("big.yaml", "name: big\nmatch: {nodes: \"" + a + "[000000-065535]\"}\nnodes:\n" +
                            "  - {match: \"" + b + "[065536-131071]\", env: {X: \"1\"}}\n");
  rusage before{};
  getrusage(RUSAGE_SELF, &before);
  const p::Profile big = p::load_profile(dir.path(), "big");
  const p::ResolvedProfile r = p::resolve_for_node(big, b + "131071");
  rusage after{};
  getrusage(RUSAGE_SELF, &after);
  ASSERT_TRUE(r.node_override);
  EXPECT_FALSE(p::resolve_for_node(big, b + "000001").node_override);
  EXPECT_LT(after.ru_maxrss - before.ru_maxrss, 64 * 1024);  // KiB
}
