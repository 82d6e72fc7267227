// The control channel's messages between slurmstepd and the sampler.
#include <gtest/gtest.h>

#include "control.hpp"

using namespace ddp::monitor;

TEST(MonitorControl, MessagesAndLines) {
  LineBuffer in;
  const std::string text = task_message(1, 5, 4242, 99) + "helper 77 123456\n" +
                           kEndMessage + kDoneMessage + "future 1 2\n" + "task x";
  in.feed(text.data(), 10);
  in.feed(text.data() + 10, text.size() - 10);
  auto m = parse_control(*in.next());
  ASSERT_TRUE(m);
  EXPECT_EQ(m->kind, ControlMessage::Kind::Task);
  EXPECT_EQ(m->local, 1);
  EXPECT_EQ(m->global, 5);
  EXPECT_EQ(m->pid, 4242);
  EXPECT_EQ(m->start_time, 99u);
  m = parse_control(*in.next());
  EXPECT_EQ(m->kind, ControlMessage::Kind::Helper);
  EXPECT_EQ(m->pid, 77);
  EXPECT_EQ(m->start_time, 123456u);
  EXPECT_EQ(parse_control(*in.next())->kind, ControlMessage::Kind::End);
  EXPECT_EQ(parse_control(*in.next())->kind, ControlMessage::Kind::Done);
  EXPECT_FALSE(parse_control(*in.next()));  // unknown: ignored
  EXPECT_FALSE(in.next());                  // "task x" has no newline yet
  EXPECT_FALSE(parse_control("task 0 0 -1"));
  EXPECT_FALSE(parse_control("helper 0 1"));
  EXPECT_FALSE(parse_control("helper 77"));  // without its start, no PID names one process
  EXPECT_FALSE(parse_control("helper 77 0"));
  EXPECT_EQ(parse_control("task 1 2 3")->start_time, 0u);  // START is the watch's; optional
  const auto exit = parse_control(exit_message(1, 5, 0x0900, 1700000000000000001));
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->kind, ControlMessage::Kind::Exit);
  EXPECT_EQ(exit->status, 0x0900);
  EXPECT_EQ(exit->wall_ns, 1700000000000000001);
  EXPECT_FALSE(parse_control("exit 1 2"));
}

// What slurmstepd reads from a sampler is bounded: a line, and the whole say.
TEST(MonitorControl, ALineLongerThanTheLimitStopsTheBuffer) {
  LineBuffer in;
  const std::string good = "helper 77 1\n";
  EXPECT_TRUE(in.feed(good.data(), good.size()));
  const std::string endless(kMaxControlLine + 1, 'x');
  EXPECT_TRUE(in.feed(endless.data(), endless.size()));
  EXPECT_TRUE(in.next());   // the line before is still read
  EXPECT_FALSE(in.next());  // then the long one ends it
  EXPECT_TRUE(in.overflowed());
  EXPECT_FALSE(in.feed("done\n", 5));
  EXPECT_FALSE(in.next());
}

TEST(MonitorControl, AFloodOfLinesStopsAtTheBudget) {
  LineBuffer in(1000);
  const std::string line = "task 0 0 1\n";
  std::size_t taken = 0, lines = 0;
  while (in.feed(line.data(), line.size())) {
    taken += line.size();
    while (in.next()) ++lines;
  }
  EXPECT_LE(taken, 1000u);
  EXPECT_EQ(lines, taken / line.size());
  EXPECT_TRUE(in.overflowed());
}

TEST(MonitorControl, ALineInManySmallPiecesIsWhole) {
  LineBuffer in;
  const std::string text = task_message(3, 9, 123, 0);
  for (char c : text) in.feed(&c, 1);
  const auto m = parse_control(*in.next());
  ASSERT_TRUE(m);
  EXPECT_EQ(m->pid, 123);
  EXPECT_FALSE(in.overflowed());
}
