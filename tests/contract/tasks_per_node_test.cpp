#include "tasks_per_node.hpp"

#include <gtest/gtest.h>

#include "error.hpp"

namespace p = ddp::plan;
using ddp::detail::expand_tasks_per_node;

TEST(TasksPerNode, ExpandsRepeats) {
  EXPECT_EQ(expand_tasks_per_node("T", "2(x3),1", 10), (std::vector<unsigned>{2, 2, 2, 1}));
  EXPECT_EQ(expand_tasks_per_node("T", "4", 10), (std::vector<unsigned>{4}));
}

TEST(TasksPerNode, RefusesWhatSlurmNeverWrites) {
  for (const char* text : {"", "0", "2(x0)", "2(3)", "2(x3", "x", "2,,1", "-1"})
    EXPECT_THROW(expand_tasks_per_node("T", text, 10), p::PlanError) << text;
  EXPECT_THROW(expand_tasks_per_node("T", "1(x11)", 10), p::PlanError);
}
