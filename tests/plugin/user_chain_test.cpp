// A user's profile travels from srun to slurmstepd as text: what srun packs loads the same on
// the node, and what the node unpacks is held to the same limits, since a user can write it.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <string>

#include "profile.hpp"
#include "profile_test_util.hpp"
#include "user_chain.hpp"

namespace p = ddp::plan;
using profile_test::error_of;
using profile_test::TempDir;

TEST(UserChain, WhatSrunPacksLoadsTheSameOnTheNode) {
  TempDir dir;
  const std::string base = dir.write("base.yaml", "name: base\nenv: {A: \"1\", B: \"x y\"}\n");
  const std::string mine =
      dir.write("mine.yaml", "name: mine\nextends: base\nenv: {B: \"2\\\"3\\\\4\", C: \"é\"}\n");
  const std::string packed = p::pack_user_chain(mine);
  EXPECT_EQ(packed.find('\n'), std::string::npos);  // one environment string
  // The node has no copy of the files.
  std::filesystem::remove(mine);
  std::filesystem::remove(base);
  const p::Profile node = p::unpack_user_chain(mine, packed);
  EXPECT_EQ(node.name, "mine");
  EXPECT_EQ(node.files, (std::vector<std::string>{mine, base}));
  ASSERT_EQ(node.settings.env.size(), 3u);
  EXPECT_EQ(node.settings.env[1].value, "2\"3\\4");
  EXPECT_EQ(node.settings.env[2].value, "é");
}

TEST(UserChain, SrunRefusesWhatWouldNotTravel) {
  TempDir dir;
  std::string big = "name: big\nenv:\n";
  for (int i = 0; i < 1000; ++i) big += "  V" + std::to_string(i) + ": \"" + std::string(100, 'x') + "\"\n";
  const std::string path = dir.write("big.yaml", big);
  const std::string e = error_of([&] { p::pack_user_chain(path); });
  EXPECT_NE(e.find("at most 96 KiB travel with a step"), std::string::npos) << e;
  // A FIFO is refused at once, not waited on.
  const std::string fifo = dir.path() + "/fifo.yaml";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_NE(error_of([&] { p::pack_user_chain(fifo); }).find("is not a regular file"),
            std::string::npos);
}

TEST(UserChain, TheNodeRefusesAForgedCopy) {
  const std::string path = "/home/u/mine.yaml";
  const auto refused = [&](const std::string& packed, const std::string& why) {
    const std::string e = error_of([&] { p::unpack_user_chain(path, packed); });
    EXPECT_NE(e.find(why), std::string::npos) << packed << " -> " << e;
    EXPECT_NE(e.find("Fix: do not set SLURM_SPANK_DDP_USER_PROFILE yourself"), std::string::npos);
  };
  refused("not json", "is not what srun writes");
  // The parser's words would quote the user's text: not repeated.
  const std::string long_token(50000, 'A');
  EXPECT_LT(error_of([&] { p::unpack_user_chain(path, "{\"files\": " + long_token + "}"); }).size(), 400u);
  refused(std::string(40000, '[') + std::string(40000, ']'), "is not what srun writes");
  refused(R"({"files": []})", "has no list of files");
  refused(R"({"files": [{"path": "/home/u/mine.yaml"}]})", "without a path or a text");
  refused(R"({"files": [{"path": "/home/u/other.yaml", "text": "name: other\n"}]})",
          "is for '/home/u/other.yaml'");
  refused(R"({"files": [{"path": "/home/u/mine.yaml", "text": "name: mine\nextends: b\n"},
                        {"path": "/etc/b.yaml", "text": "name: b\n"}]})",
          "which is no profile file beside it");
  refused(R"({"files": [{"path": "/home/u/mine.yaml", "text": "name: mine\nextends: b\n"},
                        {"path": "/home/u/b\nforged log line.yaml", "text": "name: b\n"}]})",
          "which is no profile file beside it");
  refused(std::string(p::kMaxUserChainBytes + 1, ' '), "is larger than 96 KiB");
  // A well-formed copy is still only a profile: the schema and the limits apply.
  const std::string e = error_of([&] {
    p::unpack_user_chain(path, R"({"files": [{"path": "/home/u/mine.yaml",
                                              "text": "name: mine\nextends: b\n"}]})");
  });
  EXPECT_NE(e.find("extends 'b', but /home/u has no b.yaml"), std::string::npos) << e;
}
