// Numbers as people read them in every program's messages: one rule.
#include <gtest/gtest.h>

#include <regex>

#include "human_text.hpp"

using namespace ddp::plan;

TEST(HumanText, DurationsInTheUnitThatReadsBest) {
  EXPECT_EQ(duration_text(6.6), "6.6 s");
  EXPECT_EQ(duration_text(119.94), "119.9 s");
  EXPECT_EQ(duration_text(120), "2.0 min");
  EXPECT_EQ(duration_text(4320), "72.0 min");
  EXPECT_EQ(duration_text(86400), "24.0 h");
}

TEST(HumanText, FixedDecimalsAndTheLocalTime) {
  EXPECT_EQ(fixed_text(612.46, 1), "612.5");
  EXPECT_EQ(fixed_text(3, 0), "3");
  EXPECT_TRUE(std::regex_match(local_time_text("%Y-%m-%d %H:%M:%S"),
                               std::regex(R"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)")));
}
