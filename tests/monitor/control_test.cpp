// The control channel's messages between slurmstepd and the sampler.
#include <gtest/gtest.h>

#include "control.hpp"

using namespace ddp::monitor;

TEST(MonitorControl, MessagesAndLines) {
  LineBuffer in;
  const std::string text = task_message(1, 5, 4242) + hello_message(77, 123456) + "sampler 77\n" +
                           kDoneMessage + "future 1 2\n" + "task x";
  in.feed(text.data(), 10);
  in.feed(text.data() + 10, text.size() - 10);
  auto m = parse_control(*in.next());
  ASSERT_TRUE(m);
  EXPECT_EQ(m->kind, ControlMessage::Kind::Task);
  EXPECT_EQ(m->local, 1);
  EXPECT_EQ(m->global, 5);
  EXPECT_EQ(m->pid, 4242);
  m = parse_control(*in.next());
  EXPECT_EQ(m->kind, ControlMessage::Kind::Hello);
  EXPECT_EQ(m->start_time, 123456u);
  EXPECT_EQ(parse_control(*in.next())->kind, ControlMessage::Kind::Sampler);
  EXPECT_EQ(parse_control(*in.next())->kind, ControlMessage::Kind::Done);
  EXPECT_FALSE(parse_control(*in.next()));  // unknown: ignored
  EXPECT_FALSE(in.next());                  // "task x" has no newline yet
  EXPECT_FALSE(parse_control("task 0 0 -1"));
  EXPECT_FALSE(parse_control("hello 0 1"));
}
