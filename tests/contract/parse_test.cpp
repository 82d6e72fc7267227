#include "parse.hpp"

#include <gtest/gtest.h>

#include "error.hpp"
#include "limits.hpp"

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
  EXPECT_EQ(p::parse_index_list("g", "5-5", 64), (std::vector<unsigned>{5}));
  EXPECT_TRUE(p::parse_index_list("g", "", 64).empty());
}

TEST(ParseIndexList, ReadsWhatTheKernelAndSlurmWrite) {
  // cpuset.cpus.effective and Cpus_allowed_list end with a newline; an empty cpuset is "\n".
  EXPECT_EQ(p::parse_index_list("cpuset.cpus", "0-3,8,10-11\n", p::kMaxCpuId),
            (std::vector<unsigned>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_TRUE(p::parse_index_list("cpuset.cpus", "\n", p::kMaxCpuId).empty());
  EXPECT_EQ(p::parse_index_list("c", "5 \t\n", 8), (std::vector<unsigned>{5}));
  // Slurm's GPU lists ("%d" joined by commas) and core lists (bit_fmt: pairs as ranges).
  EXPECT_EQ(p::parse_index_list("SLURM_STEP_GPUS", "4,5,6,7", p::kMaxGpuIndex).size(), 4u);
  EXPECT_EQ(p::parse_index_list("S_STEP_ALLOC_CORES", "0-1,4", 64),
            (std::vector<unsigned>{0, 1, 4}));
  EXPECT_EQ(p::parse_index_list("c", "0-65535", p::kMaxCpuId).size(), 65536u);
}

TEST(ParseIndexList, RejectsJunkNamingTheSource) {
  for (const char* bad : {",", "0,", ",0", "0,,1", "3-1", "1-", "-1", "-", "a", "0-3,x", " 0",
                          "0-3\n1", "1-2-3", "0x3", "+1", "0:2", "0-15:2/4", "65536",
                          "99999999999999999999", "0,0", "0-3,2"}) {
    try {
      p::parse_index_list("Cpus_allowed_list", bad, p::kMaxCpuId);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const p::PlanError& e) {
      EXPECT_NE(std::string(e.what()).find("Cpus_allowed_list"), std::string::npos) << e.what();
    }
  }
}

TEST(ParseIndexList, RejectsDuplicatesBackwardsAndJunk) {
  EXPECT_THROW(p::parse_index_list("g", "0,0", 64), p::PlanError);
  EXPECT_THROW(p::parse_index_list("g", "3-1", 64), p::PlanError);
  EXPECT_THROW(p::parse_index_list("g", "0,,1", 64), p::PlanError);
  EXPECT_THROW(p::parse_index_list("g", "GPU-1234", 64), p::PlanError);
  EXPECT_THROW(p::parse_index_list("g", "65", 64), p::PlanError);
}

// Each error is one line naming the variable, the text and the item at fault.
TEST(ParseIndexList, ErrorsSayWhatIsWrongWhere) {
  const auto error = [](const char* text) {
    try {
      p::parse_index_list("cpuset.cpus", text, p::kMaxCpuId);
    } catch (const p::PlanError& e) {
      const std::string msg = e.what();
      EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
      EXPECT_EQ(msg.rfind("cpuset.cpus=", 0), 0u) << msg;
      EXPECT_NE(msg.find("e.g. 0-3,8"), std::string::npos) << msg;
      return msg;
    }
    ADD_FAILURE() << "accepted '" << text << "'";
    return std::string();
  };
  const auto has = [](const std::string& msg, const char* part) {
    return msg.find(part) != std::string::npos;
  };
  EXPECT_TRUE(has(error("0-65536"), "'0-65536' is out of range; allowed: 0..65535"));
  EXPECT_TRUE(has(error("3,1-4"), "it lists 3 twice"));
  EXPECT_TRUE(has(error("4-2"), "range '4-2' runs backwards"));
  EXPECT_TRUE(has(error("0-15:2/4"), "'0-15:2/4' has a stride"));
  EXPECT_TRUE(has(error("1,"), "an item is empty"));
  EXPECT_TRUE(has(error(",1"), "an item is empty"));
  EXPECT_TRUE(has(error("3-"), "'3-' is not an index or a low-high range"));
  EXPECT_TRUE(has(error("-3"), "'-3' is not an index or a low-high range"));
  EXPECT_TRUE(has(error("1-2-3"), "'1-2-3' is not an index or a low-high range"));
  EXPECT_TRUE(has(error(" 1"), "' 1' is not an index"));       // blanks only at the end
  EXPECT_TRUE(has(error("1, 2"), "' 2' is not an index"));
  EXPECT_TRUE(has(error("1\n2"), "is not an index"));          // one line only
  EXPECT_TRUE(has(error("99999999999999999999999"), "is out of range"));
}

TEST(ParseIndexList, RepeatedRangesFailAtTheFirstRepeat) {
  // Every range expanded first would be a megabyte of "0-65535," = 6 billion CPUs.
  std::string repeated;
  while (repeated.size() < (1 << 20)) repeated += "0-65535,";
  repeated += "0";
  try {
    p::parse_index_list("cpuset.cpus", repeated, p::kMaxCpuId);
    ADD_FAILURE() << "accepted a repeated range";
  } catch (const p::PlanError& e) {
    EXPECT_NE(std::string(e.what()).find("it lists 0 twice"), std::string::npos) << e.what();
  }
}

TEST(Quoted, EscapesControlCharactersAndCutsLongInput) {
  EXPECT_EQ(p::quoted("a\nb"), "'a\\x0ab'");
  EXPECT_EQ(p::quoted(std::string(100, 'x')).size(), 64u + 2 + 3);
}

TEST(FormatIndexList, RangesSortedOnceAndReadBack) {
  EXPECT_EQ(ddp::plan::format_index_list({3, 2, 0, 1, 8, 10, 11, 8}), "0-3,8,10-11");
  EXPECT_EQ(ddp::plan::format_index_list({5}), "5");
  EXPECT_EQ(ddp::plan::format_index_list({}), "");
  EXPECT_EQ(ddp::plan::parse_index_list("x", ddp::plan::format_index_list({4, 6, 5, 9}), 100),
            (std::vector<unsigned>{4, 5, 6, 9}));
}
