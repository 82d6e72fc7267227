#include "hostlist.hpp"

#include <gtest/gtest.h>

#include "error.hpp"

namespace p = ddp::plan;

TEST(Hostlist, ExpandsRangesWithPaddingAndPlainNames) {
  EXPECT_EQ(p::expand_hostlist("l", "gn[008-011]"),
            (std::vector<std::string>{"gn008", "gn009", "gn010", "gn011"}));
  EXPECT_EQ(p::expand_hostlist("l", "a,b,c"), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(p::expand_hostlist("l", "gpu-a7,x[1,3]"),
            (std::vector<std::string>{"gpu-a7", "x1", "x3"}));
}

TEST(Hostlist, FirstHostIsTheStepsFirstNode) {
  EXPECT_EQ(p::first_host("l", "nid[001234-001300]"), "nid001234");
  EXPECT_EQ(p::first_host("l", "node-1-2,node-1-1"), "node-1-2");
}

TEST(Hostlist, RejectsEmptyAndMalformed) {
  EXPECT_THROW(p::first_host("SLURM_STEP_NODELIST", ""), p::PlanError);
  EXPECT_THROW(p::first_host("SLURM_STEP_NODELIST", "n[1-"), p::PlanError);
  EXPECT_THROW(p::expand_hostlist("l", std::string("a\0b", 3)), p::PlanError);
}
