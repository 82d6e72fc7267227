// The contract's first_host reads SLURM_STEP_NODELIST without libslurm (libddp must load where
// Slurm is not installed); on every list it must agree with libslurm's own expansion, and refuse
// exactly the lists the plugin refuses.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "error.hpp"
#include "hostlist.hpp"
#include "node_list.hpp"

namespace p = ddp::plan;

namespace {

// Lists in the shapes Slurm writes and admins type, built from parts so that prefixes, padding,
// several brackets, suffixes and separators meet in every combination.
std::vector<std::string> sample_lists() {
  const std::vector<std::string> names = {
      "n1", "node-1-2", "gpu.a_7", "n[1-3]", "nid[001234-001300,002000]", "x[7,3-5]",
      "rack[1-2]-n[01-02]", "n[3-4][05-06]", "n[2-3]-ib", "[1-2]x", "a[09-11]b[0-1]c",
      "n[0000000001-0000000003]", "n[099-100]", "n[1-010]", "n[007]", "q[0-65535]",
      "y9999999999999999999", "y99999999999999999999", "y00000000000000000000000000000001",
      "a99999999999999999999[1-2]"};
  std::vector<std::string> lists;
  for (const auto& a : names) {
    lists.push_back(a);
    for (const auto& b : names) {
      lists.push_back(a + "," + b);
      lists.push_back(a + " " + b);
    }
    lists.push_back("," + a);
    lists.push_back(a + ",");
  }
  return lists;
}

}  // namespace

TEST(FirstHostAgainstLibslurm, SameFirstHostOnEveryList) {
  const auto lists = sample_lists();
  ASSERT_GT(lists.size(), 500u);
  for (const auto& list : lists) {
    std::vector<std::string> hosts;
    try {
      hosts = p::expand_hostlist("l", list);
    } catch (const p::PlanError& e) {
      EXPECT_THROW(p::first_host("l", list), p::PlanError) << list;
      continue;
    }
    ASSERT_FALSE(hosts.empty()) << list;
    EXPECT_EQ(p::first_host("l", list), hosts.front()) << list;
    EXPECT_EQ(p::count_hosts("l", list), hosts.size()) << list;
  }
}

TEST(FirstHostAgainstLibslurm, BothRefuseMalformedLists) {
  for (const char* list : {"", "n[1-", "n]", "n[[1]]", "n[5-1]", "n[]", "n[a]", "n[1,,2]",
                           "n[-1]", "n[0-65536]", "n1;x", "n$(id)", "n\t1", ",", " "}) {
    EXPECT_THROW(p::expand_hostlist("l", list), p::PlanError) << list;
    EXPECT_THROW(p::first_host("l", list), p::PlanError) << list;
  }
}
