// The walk that root's node facts cache and the job's sampler open their directories with.
#include "trusted_dir.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace p = ddp::plan;
namespace fs = std::filesystem;

namespace {

class TrustedDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("ddp-trusted-dir-" + std::to_string(getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_);
    chmod(root_.c_str(), 0755);
  }
  void TearDown() override { fs::remove_all(root_); }
  p::TrustedDir open(const fs::path& path, bool make = false) {
    return p::open_trusted_dir(path.string(), geteuid(), make);
  }
  bool has(const p::TrustedDir& d, const std::string& part) {
    return d.problem().find(part) != std::string::npos;
  }
  fs::path root_;
};

TEST_F(TrustedDirTest, MakesWhatIsMissingWithoutWritesForOthers) {
  const mode_t old = umask(0);  // a careless user's umask: still no directory others may write
  const auto dir = open(root_ / "a" / "b", true);
  umask(old);
  ASSERT_TRUE(dir) << dir.problem();
  struct stat st{};
  ASSERT_EQ(fstat(dir.fd(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0755u);
  EXPECT_TRUE(open(root_ / "." / "a//b/"));
}

TEST_F(TrustedDirTest, SaysWhatIsMissingAndOnlyTheLastComponentIsMissing) {
  auto dir = open(root_ / "none");
  EXPECT_FALSE(dir);
  EXPECT_TRUE(dir.missing());
  EXPECT_TRUE(has(dir, (root_ / "none").string() + " does not exist")) << dir.problem();
  dir = open(root_ / "none" / "deeper");
  EXPECT_FALSE(dir.missing());
}

TEST_F(TrustedDirTest, RefusesRelativePathsDotDotFilesAndLinks) {
  EXPECT_TRUE(has(open("relative/dir"), "'relative/dir' is not an absolute path"));
  fs::create_directories(root_ / "a");
  EXPECT_TRUE(has(open(root_ / "a" / ".." / "a"), "names '..'"));
  std::ofstream(root_ / "file") << "x";
  EXPECT_TRUE(
      has(open(root_ / "file" / "x", true), (root_ / "file").string() + " is not a directory"));
  fs::create_directory_symlink(root_ / "a", root_ / "link");
  const auto link = open(root_ / "link" / "x", true);
  EXPECT_TRUE(has(link, (root_ / "link").string() + " is a symbolic link to '" +
                            (root_ / "a").string() + "'"))
      << link.problem();
  EXPECT_FALSE(fs::exists(root_ / "a" / "x"));
}

TEST_F(TrustedDirTest, OthersMayWriteADirectoryOnlyWhenItIsSticky) {
  fs::create_directories(root_ / "open" / "in");
  ASSERT_EQ(chmod((root_ / "open").c_str(), 0777), 0);
  const auto open_dir = open(root_ / "open" / "in");
  EXPECT_TRUE(has(open_dir, (root_ / "open").string() + " (mode 0777, owner "))
      << open_dir.problem();
  EXPECT_TRUE(
      has(open_dir, "is writable by others, who could swap what lies under it: chmod go-w"));
  ASSERT_EQ(chmod((root_ / "open").c_str(), 01777), 0);
  EXPECT_TRUE(open(root_ / "open" / "in"));
  ASSERT_EQ(chmod((root_ / "open").c_str(), 0775), 0);  // group-writable is others too
  EXPECT_FALSE(open(root_ / "open" / "in"));
}

TEST_F(TrustedDirTest, EveryDirectoryOnTheWayIsRootsOrTheOwners) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to make a directory of another user";
  fs::create_directories(root_ / "theirs" / "mine");
  ASSERT_EQ(chown((root_ / "theirs").c_str(), 65534, 65534), 0);
  const auto dir = p::open_trusted_dir((root_ / "theirs" / "mine").string(), 1234, false);
  EXPECT_TRUE(has(dir, (root_ / "theirs").string() + " (mode 0755, owner ")) << dir.problem();
  EXPECT_TRUE(has(dir, "belongs to another user, who could swap what lies under it; only root or "
                       "uid 1234 may own it"))
      << dir.problem();
  // The owner's own directory under root's is fine.
  ASSERT_EQ(chown((root_ / "theirs").c_str(), 1234, 1234), 0);
  EXPECT_TRUE(p::open_trusted_dir((root_ / "theirs" / "mine").string(), 1234, false));
}

}  // namespace
