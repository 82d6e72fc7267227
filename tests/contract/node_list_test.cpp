#include "node_list.hpp"

#include <gtest/gtest.h>

#include <string>

#include "error.hpp"

namespace p = ddp::plan;

namespace {

std::string error_of(const std::string& list) {
  try {
    p::first_host("SLURM_STEP_NODELIST", list);
  } catch (const p::PlanError& e) {
    return e.what();
  }
  return "";
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST(FirstHost, PlainNamesAndPrefixes) {
  EXPECT_EQ(p::first_host("l", "n1"), "n1");
  EXPECT_EQ(p::first_host("l", "node-1-2,node-1-1"), "node-1-2");
  EXPECT_EQ(p::first_host("l", "gpu-a7.cluster_x,b"), "gpu-a7.cluster_x");
}

TEST(FirstHost, ZeroPaddedRangesKeepTheirWidth) {
  EXPECT_EQ(p::first_host("l", "nid[001234-001300]"), "nid001234");
  EXPECT_EQ(p::first_host("l", "gn[008-011]"), "gn008");
  EXPECT_EQ(p::first_host("l", "n[0-9]"), "n0");
  EXPECT_EQ(p::first_host("l", "n[01-2]"), "n01");
}

TEST(FirstHost, CommasInsideAndOutsideBrackets) {
  EXPECT_EQ(p::first_host("l", "nid[001234-001300,002000]"), "nid001234");
  EXPECT_EQ(p::first_host("l", "x[7,3-5],y[1-2]"), "x7");
  EXPECT_EQ(p::first_host("l", "a,b[1-2],c"), "a");
  EXPECT_EQ(p::first_host("l", "n1 n2"), "n1");
}

TEST(FirstHost, SeveralBracketGroupsAndSuffixes) {
  EXPECT_EQ(p::first_host("l", "rack[1-2]-n[01-02]"), "rack1-n01");
  EXPECT_EQ(p::first_host("l", "n[3-4][05-06]"), "n305");
  EXPECT_EQ(p::first_host("l", "n[1-2]-[3-4]"), "n1-3");
  EXPECT_EQ(p::first_host("l", "[1-2][3-4]"), "13");
}

TEST(FirstHost, MalformedListsAreRefusedWithTheReason) {
  EXPECT_TRUE(has(error_of(""), "SLURM_STEP_NODELIST is empty"));
  EXPECT_TRUE(has(error_of("n[1-"), "an unbalanced '['"));
  EXPECT_TRUE(has(error_of("n1]"), "an unbalanced ']'"));
  EXPECT_TRUE(has(error_of("n[[1]]"), "an unbalanced '['"));
  for (const char* range : {"n[5-1]", "n[]", "n[a]", "n[1,,2]", "n[-1]", "n[0-65536]", "n[1-2x]"})
    EXPECT_TRUE(has(error_of(range), "is not N, LOW-HIGH or a list of them")) << range;
  EXPECT_TRUE(has(error_of("n1;reboot"), "host names are letters, digits, '-', '_' and '.'"));
  EXPECT_TRUE(has(error_of(std::string("a\0b", 3)), "the character '\\x00'"));
  EXPECT_TRUE(has(error_of(",, ,"), "it names no host"));
  // libslurm reads "n[2-3]-ib" as one host named so, brackets and all.
  EXPECT_TRUE(has(error_of("n[2-3]-ib"), "the text '-ib' after a name's last range"));
  EXPECT_TRUE(has(error_of("a[1-2]b[3]c,x"), "the text 'c' after a name's last range"));
  EXPECT_TRUE(has(error_of("n[0-65535][0-65535]"), "names more than 131072 hosts"));
  // libslurm writes y99999999999999999999 back as y18446744073709551615 (the fuzzer's find).
  EXPECT_TRUE(has(error_of("y99999999999999999999"), "ends in a number of more than 19 digits"));
  EXPECT_EQ(p::first_host("l", "y0009999999999999999999"), "y0009999999999999999999");
  // Every message says what a list looks like.
  EXPECT_TRUE(has(error_of("n$"), "expected e.g. node[01-04],gpu7"));
}

TEST(CountHosts, CountsEveryName) {
  EXPECT_EQ(p::count_hosts("l", "n[1-4],m,x[1,3][1-2]"), 4u + 1u + 4u);
  EXPECT_EQ(p::count_hosts("l", "n[0-65535],m[0-65535]"), p::kMaxHosts);
}

TEST(QuotedList, AShortListIsQuotedWhole) {
  EXPECT_EQ(p::quoted_list("n[01-04],gpu7"), "n[01-04],gpu7");
}

TEST(QuotedList, AFragmentedAllocationIsCutAtARangeAndCounted) {
  // 10,000 nodes, every other one: "n[00001,00003,...,19999]", about 60 KB.
  std::string list = "n[";
  for (int i = 1; i < 20000; i += 2) list += (i > 1 ? "," : "") + std::to_string(100000 + i).substr(1);
  list += "]";
  const std::string q = p::quoted_list(list);
  EXPECT_LE(q.size(), p::kMaxQuotedList + 24);
  EXPECT_EQ(q.substr(0, 14), "n[00001,00003,");
  EXPECT_TRUE(has(q, "],... (10000 hosts)")) << q;
  // Cut after a whole range, never inside a number.
  const auto close = q.find(']');
  EXPECT_EQ(q[close - 6], ',');
}

TEST(QuotedList, ManyNamesAreCutBetweenNames) {
  std::string list;
  for (int i = 0; i < 1000; ++i) list += (i ? "," : "") + std::string("gpu-node-") + std::to_string(i);
  const std::string q = p::quoted_list(list);
  EXPECT_LE(q.size(), p::kMaxQuotedList + 24);
  EXPECT_TRUE(has(q, "gpu-node-1,")) << q;
  EXPECT_TRUE(has(q, ",... (1000 hosts)")) << q;
  EXPECT_FALSE(has(q, "]"));
}
