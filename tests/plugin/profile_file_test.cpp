// The file under a profile: missing, empty, too large, not text, not one YAML document.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <vector>

#include "profile.hpp"
#include "profile_test_util.hpp"

namespace p = ddp::plan;
using profile_test::error_of;
using profile_test::TempDir;

namespace {

std::string load_error(const std::string& path) {
  return error_of([&] { p::load_profile_file(path); });
}

}  // namespace

TEST(ProfileFile, MissingFileNamesThePathAndTheFix) {
  TempDir dir;
  const std::string path = dir.path() + "/gone.yaml";
  const std::string e = load_error(path);
  EXPECT_NE(e.find(path + ": cannot be opened: No such file or directory. Fix: check the path"),
            std::string::npos)
      << e;
}

TEST(ProfileFile, EmptyFilesAreErrors) {
  TempDir dir;
  for (const char* text : {"", "# only a comment\n", "---\n", "\n\n"}) {
    const std::string path = dir.write("t.yaml", text);
    const std::string e = load_error(path);
    EXPECT_NE(e.find(path + ": is empty. Fix: write at least `name: NAME`"), std::string::npos)
        << e;
  }
}

TEST(ProfileFile, FilesOverOneMebibyteAreRefused) {
  TempDir dir;
  const std::string big = "name: t\n# " + std::string(p::kMaxProfileBytes, 'x') + "\n";
  const std::string path = dir.write("t.yaml", big);
  const std::string e = load_error(path);
  EXPECT_NE(e.find(path + ": is larger than a profile may be, 1048576 bytes (1 MiB). Fix:"),
            std::string::npos)
      << e;
  // A file of exactly the limit still loads.
  const std::string fits = "name: t\n# ";
  dir.write("t.yaml", fits + std::string(p::kMaxProfileBytes - fits.size() - 1, 'x') + "\n");
  EXPECT_EQ(load_error(path), "");
}

TEST(ProfileFile, OnlyRegularFilesAreRead) {
  TempDir dir;
  const std::string sub = dir.path() + "/d.yaml";
  ASSERT_EQ(::mkdir(sub.c_str(), 0755), 0);
  EXPECT_NE(load_error(sub).find(sub + ": is not a regular file"), std::string::npos);
  // A FIFO where a profile should be must fail at once, not wait for a writer.
  const std::string fifo = dir.path() + "/f.yaml";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  EXPECT_NE(load_error(fifo).find(fifo + ": is not a regular file"), std::string::npos);
}

TEST(ProfileFile, NulBytesAreRefusedWithTheirPosition) {
  TempDir dir;
  const std::string path = dir.write("t.yaml", std::string("name: t\nenv: {A: x\0y}\n", 22));
  const std::string e = load_error(path);
  EXPECT_NE(e.find(path + ":2:11: holds a NUL byte; a profile is text"), std::string::npos) << e;
}

TEST(ProfileFile, OneDocumentOnly) {
  TempDir dir;
  const std::string path = dir.write("t.yaml", "name: t\n---\nname: u\n");
  const std::string e = load_error(path);
  EXPECT_NE(e.find(path + ":3:1: holds more than one YAML document ('---'). Fix: keep one"),
            std::string::npos)
      << e;
}

TEST(ProfileFile, SyntaxErrorsPointAtTheirLineAndColumn) {
  TempDir dir;
  const std::string path = dir.write("t.yaml", "name: t\nnetwork: {socket_interfaces: [ib0}\n");
  const std::string e = load_error(path);
  EXPECT_NE(e.find(path + ":2:"), std::string::npos) << e;
  EXPECT_NE(e.find("is not valid YAML: "), std::string::npos) << e;
  EXPECT_NE(e.find("Fix: correct the YAML at that point"), std::string::npos) << e;
}

// yaml-cpp gives up after the end of the file on an unclosed '[' or '{', and reads an unclosed
// quote to the end of the file without complaint; the error points where they were opened.
TEST(ProfileFile, UnclosedBracketsAndQuotesPointWhereTheyWereOpened) {
  TempDir dir;
  struct Case {
    std::string text, at, problem;
  };
  const std::vector<Case> cases = {
      {"name: t\nnetwork: {socket_interfaces: [ib0, ib1\n",
       ":2:30:", "the '[' that opens this list is never closed (the file ends before its ']')"},
      {"name: t\nenv: {A: b\n\n\n",
       ":2:6:", "the '{' that opens this map is never closed (the file ends before its '}')"},
      {"name: t\nmatch: {cluster: c\nbinding: {cpus: none}\n",
       ":2:8:", "the '{' that opens this map"},
      {"name: t\nenv: {A: [x, {B: c\n", ":2:14:", "the '{' that opens this map"},
      {"name: t\ndescription: \"GPU nodes\nbinding: {cpus: none}\n", ":2:14:",
       "the double quote (\") that opens this value is never closed (the file ends before its "
       "closing \")"},
      {"name: t\ndescription: 'it''s\n",
       ":2:14:", "the single quote (') that opens this value is never closed"},
      {"name: t\nenv: {A: \"x\\\"}\n", ":2:10:", "the double quote (\") that opens this value"},
  };
  for (const Case& c : cases) {
    const std::string path = dir.write("t.yaml", c.text);
    const std::string e = load_error(path);
    EXPECT_NE(e.find(path + c.at + " is not valid YAML: " + c.problem), std::string::npos)
        << c.text << "\n"
        << e;
    EXPECT_NE(e.find("Fix: "), std::string::npos) << e;
  }
  // Closed ones, across lines and with escaped quotes inside, are fine.
  const std::string ok = dir.write(
      "t.yaml",
      "name: t\ndescription: \"two\n  lines \\\" and 'x'\"\nenv: {A: 'it''s', B: \"]\"}\n");
  EXPECT_EQ(load_error(ok), "");
}

TEST(ProfileFile, PathologicalNestingStopsWithAMessage) {
  TempDir dir;
  const std::string deep = std::string(10000, '[') + std::string(10000, ']');
  const std::string path = dir.write("t.yaml", "name: t\nenv: " + deep + "\n");
  const std::string e = load_error(path);
  EXPECT_NE(e.find(path + ":2:"), std::string::npos) << e;
  EXPECT_NE(e.find("nests deeper than YAML is read here; a profile nests at most 5 levels"),
            std::string::npos)
      << e;
}
