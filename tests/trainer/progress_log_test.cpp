// The trainer's lines in a batch log: time-stamped, with the training loss and the time left.
#include <gtest/gtest.h>

#include <regex>

#include "progress_log.hpp"

namespace tr = ddp::trainer;

TEST(ProgressLog, TheTimeLeft) {
  EXPECT_FALSE(tr::time_left(5, 0, 10));
  EXPECT_FALSE(tr::time_left(5, 10, 0));  // the last epoch's line says nothing of it
  EXPECT_DOUBLE_EQ(*tr::time_left(30, 3, 7), 70);
}

TEST(ProgressLog, AnEpochLineHasTheTimeTheLossAndWhatIsLeft) {
  const std::string line = tr::epoch_line(2, 5, 31.2344, 3.12345, 96.0);
  EXPECT_TRUE(std::regex_match(line, std::regex(R"(\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\] Epoch 2/5 completed in )"
                                                R"(31\.234 seconds, training loss 3\.1235?, about 96\.0 s left)")))
      << line;
  // The reference's words stay, so what reads them still finds them.
  EXPECT_NE(tr::epoch_line(5, 5, 1, 1, 0.0).find("] Epoch 5/5 completed in 1.000 seconds"), std::string::npos);
  EXPECT_EQ(tr::epoch_line(1, 5, 1, 1, std::nullopt).find("left"), std::string::npos);
  const std::string step = tr::step_line(2, 5, 40, 97, 3.21, 186.0);
  EXPECT_NE(step.find("] Epoch 2/5: step 40 of 97, training loss 3.2100 (rank 0), about 3.1 min left"),
            std::string::npos)
      << step;
}
