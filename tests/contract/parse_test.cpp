#include "parse.hpp"

#include <gtest/gtest.h>

#include "error.hpp"

namespace p = ddp::plan;

TEST(ParseUnsigned, AcceptsPlainNumbersInRange) {
  EXPECT_EQ(p::parse_unsigned("--x", "1", 1, 10), 1u);
  EXPECT_EQ(p::parse_unsigned("--x", "10", 1, 10), 10u);
  EXPECT_EQ(p::parse_unsigned("--x", "007", 1, 10), 7u);
}

TEST(ParseUnsigned, RejectsEverythingElseNamingOptionAndRange) {
  for (const char* bad : {"", "0", "11", "-1", "+3", " 3", "3 ", "3x", "0x3", "1e3",
                          "99999999999999999999999", "3\n"}) {
    try {
      p::parse_unsigned("--ddp-nodes", bad, 1, 10);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const p::PlanError& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("--ddp-nodes"), std::string::npos) << msg;
      EXPECT_NE(msg.find("1..10"), std::string::npos) << msg;
    }
  }
}

TEST(ParseIndexList, ExpandsCommasAndRangesInOrder) {
  EXPECT_EQ(p::parse_index_list("g", "0,1,2,3", 64), (std::vector<unsigned>{0, 1, 2, 3}));
  EXPECT_EQ(p::parse_index_list("g", "2-3,0", 64), (std::vector<unsigned>{2, 3, 0}));
  EXPECT_TRUE(p::parse_index_list("g", "", 64).empty());
}

TEST(ParseIndexList, RejectsDuplicatesBackwardsAndJunk) {
  EXPECT_THROW(p::parse_index_list("g", "0,0", 64), p::PlanError);
  EXPECT_THROW(p::parse_index_list("g", "3-1", 64), p::PlanError);
  EXPECT_THROW(p::parse_index_list("g", "0,,1", 64), p::PlanError);
  EXPECT_THROW(p::parse_index_list("g", "GPU-1234", 64), p::PlanError);
  EXPECT_THROW(p::parse_index_list("g", "65", 64), p::PlanError);
}

TEST(Quoted, EscapesControlCharactersAndCutsLongInput) {
  EXPECT_EQ(p::quoted("a\nb"), "'a\\x0ab'");
  EXPECT_EQ(p::quoted(std::string(100, 'x')).size(), 64u + 2 + 3);
}
