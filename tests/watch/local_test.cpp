#include <gtest/gtest.h>

#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

#include "error.hpp"
#include "error_file.hpp"
#include "frozen.hpp"
#include "verdict_text.hpp"
#include "watch_args.hpp"

namespace w = ddp::watch;
using std::chrono::seconds;

namespace {
w::Clock::time_point t(double s) {
  return w::Clock::time_point(std::chrono::duration_cast<w::Clock::duration>(std::chrono::duration<double>(s)));
}
}  // namespace

TEST(WatchFrozen, StoppedForTheWholeTimeoutIsFrozen) {
  w::FrozenClock c;
  EXPECT_FALSE(c.update({'S', 5, 0}, t(0), seconds(45), seconds(45)));
  EXPECT_FALSE(c.update({'T', 5, 0}, t(1), seconds(45), seconds(45)));
  EXPECT_FALSE(c.update({'T', 5, 0}, t(45.9), seconds(45), seconds(45)));
  EXPECT_EQ(c.update({'T', 5, 0}, t(46), seconds(45), seconds(45)), w::How::Stopped);
  EXPECT_EQ(c.seconds(t(46)), 45u);
}

TEST(WatchFrozen, WaitingWorkingOrDebuggedIsNeverFrozen) {
  for (char state : {'S', 'R', 't'}) {
    w::FrozenClock c;
    for (int s = 0; s < 1000; s += 5) EXPECT_FALSE(c.update({state, 7, 0}, t(s), seconds(45), seconds(45))) << state;
  }
}

TEST(WatchFrozen, UninterruptibleSleepCountsOnlyWithoutProgress) {
  w::FrozenClock slow_write;
  for (int s = 0; s < 300; s += 5)  // a checkpoint to a slow file system: D, but bytes move
    EXPECT_FALSE(slow_write.update({'D', 7, static_cast<std::uint64_t>(s) * 1000}, t(s), seconds(45), seconds(45)));
  w::FrozenClock hung;
  EXPECT_FALSE(hung.update({'D', 7, 100}, t(0), seconds(45), seconds(45)));
  EXPECT_FALSE(hung.update({'D', 7, 100}, t(44), seconds(45), seconds(45)));
  EXPECT_EQ(hung.update({'D', 7, 100}, t(45), seconds(45), seconds(45)), w::How::Hung);
  // Back to work resets the clock.
  EXPECT_FALSE(hung.update({'R', 8, 100}, t(46), seconds(45), seconds(45)));
  EXPECT_FALSE(hung.update({'D', 8, 100}, t(47), seconds(45), seconds(45)));
}

TEST(WatchFrozen, ThisProcessSamplesAsRunning) {
  const auto s = w::sample_task("/proc", static_cast<long>(getpid()));
  ASSERT_TRUE(s);
  EXPECT_EQ(s->state, 'R');
  EXPECT_FALSE(w::sample_task("/proc", 0x7ffffff0));
}

TEST(WatchErrorFile, TorchsRecordFormatGivesTheExceptionAndItsInnermostFrame) {
  const std::string text = R"({"message": {"message": "ValueError: bad batch", "extraInfo": {"py_callstack": "Traceback (most recent call last):\n  File \"/usr/lib/python3/dist-packages/torch/distributed/elastic/multiprocessing/errors/__init__.py\", line 345, in wrapper\n    return f(*args, **kwargs)\n  File \"/work/train.py\", line 57, in step\n    raise ValueError(\"bad batch\")\nValueError: bad batch\n", "timestamp": "1700000000"}}})";
  const auto r = w::parse_error_file(text);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->error, "ValueError: bad batch");
  EXPECT_EQ(r->where, "File \"/work/train.py\", line 57, in step");
  EXPECT_EQ(r->at_ns, 1700000000LL * 1000000000);
  EXPECT_EQ(w::parse_error_file(R"({"message": "plain"})")->error, "plain");
  EXPECT_FALSE(w::parse_error_file("[]"));
  EXPECT_FALSE(w::parse_error_file("{\"nope\": 1}"));
  EXPECT_FALSE(w::parse_error_file("garbage"));
}

TEST(WatchErrorFile, OnlyARegularFileIsRead) {
  char dir[] = "/tmp/ddp-watch-test.XXXXXX";
  ASSERT_TRUE(mkdtemp(dir));
  const std::string file = std::string(dir) + "/rank-0.json";
  std::ofstream(file) << R"({"message": {"message": "E: x", "extraInfo": {}}})";
  const auto r = w::read_error_file(file);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->error, "E: x");
  EXPECT_GT(r->at_ns, 0);
  const std::string fifo = std::string(dir) + "/rank-1.json";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_FALSE(w::read_error_file(fifo));  // and does not block
  EXPECT_FALSE(w::read_error_file(std::string(dir) + "/missing.json"));
  unlink(fifo.c_str());
  unlink(file.c_str());
  rmdir(dir);
}

TEST(WatchText, TheVerdictNamesTheFirstFailureOnceAndCountsTheOthers) {
  w::Verdict v;
  v.first.how = w::How::Exit;
  v.first.rank = 3;
  v.first.host = "n2";
  v.first.code = 1;
  v.first.error = "ValueError: bad batch";
  v.first.where = "File \"/work/train.py\", line 57, in step";
  v.also["exit code 1"] = 2;
  v.also["SIGKILL"] = 1;
  const auto lines = w::verdict_lines(v, {42, 0, 4, 45});
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], "step 42.0 failed: rank 3 on n2 exited with code 1, the first of 4 ranks to "
                      "fail; ending the step");
  EXPECT_EQ(lines[1], "root cause: ValueError: bad batch (File \"/work/train.py\", line 57, in step)");
  EXPECT_EQ(lines[2], "also failed after it: 1 rank (SIGKILL), 2 ranks (exit code 1)");
}

TEST(WatchText, FrozenAndSilentVerdictsNameTheTimeout) {
  w::Verdict v;
  v.first.how = w::How::Silent;
  v.first.host = "n2";
  v.first.ranks = "2-3";
  v.first.seconds = 46;
  v.other_silent_nodes = 3;
  const auto lines = w::verdict_lines(v, {7, 1, 4, 45});
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], "step 7.1 failed: node n2 (ranks 2-3) has not answered the failure watch for "
                      "46 s: the node froze, or dropped off the network; ending the step (failure "
                      "watch time-out 45 s: --ddp-watch, profile watch.timeout)");
  EXPECT_EQ(lines[1], "3 other nodes stopped answering the failure watch too");
  w::Verdict killed;
  killed.first.how = w::How::Signal;
  killed.first.code = 9;
  killed.first.host = "n1";
  EXPECT_EQ(w::verdict_lines(killed, {7, 1, 4, 45})[0],
            "step 7.1 failed: rank 0 on n1 was killed by signal 9 (SIGKILL), the first of 4 ranks "
            "to fail; ending the step");
  w::Verdict plain;
  plain.first.rank = 1;
  plain.first.code = 2;
  plain.first.host = "n1";
  EXPECT_NE(w::verdict_lines(plain, {7, 1, 4, 45})[1].find("left no error file"), std::string::npos);
}

TEST(WatchArgs, RoundTripAndRefusals) {
  w::WatchArgs a;
  a.job = 42;
  a.step = 3;
  a.node = 1;
  a.nodes = 2;
  a.host = "n2";
  a.world = 4;
  a.head = "n1";
  a.ports = {23000, 23999};
  a.timeout = 30;
  a.hung_timeout = 600;
  a.error_dir = "/tmp/ddp-42.3-x";
  a.control_fd = 3;
  const auto b = w::parse_watch_args(w::to_argv(a));
  EXPECT_EQ(w::to_argv(b), w::to_argv(a));
  EXPECT_EQ(b.hung_timeout, 600u);
  EXPECT_THROW(w::parse_watch_args({"--host", "n1"}), ddp::plan::PlanError);
  EXPECT_THROW(w::parse_watch_args({"--bogus", "1"}), ddp::plan::PlanError);
  auto argv = w::to_argv(a);
  argv.insert(argv.end(), {"--timeout", "1"});
  EXPECT_THROW(w::parse_watch_args(argv), ddp::plan::PlanError);
  EXPECT_EQ(w::error_file("/d", 7), "/d/rank-7.json");
}

TEST(WatchFrozen, AFileSystemFailoverIsNoHangUnderTheLongerDStateTimeout) {
  EXPECT_EQ(w::default_hung_timeout(45), 300u);
  EXPECT_EQ(w::default_hung_timeout(600), 600u);
  // Lustre failing over: every rank in D without progress for two minutes, then back.
  w::FrozenClock failover;
  const auto hung_timeout = seconds(w::default_hung_timeout(45));
  for (int s = 0; s <= 120; s += 5)
    EXPECT_FALSE(failover.update({'D', 7, 100}, t(s), seconds(45), hung_timeout)) << s;
  EXPECT_FALSE(failover.update({'S', 8, 200}, t(125), seconds(45), hung_timeout));
  // A stop still counts from the (short) time-out, and a real hang from the long one.
  w::FrozenClock hung;
  EXPECT_FALSE(hung.update({'D', 7, 100}, t(0), seconds(45), hung_timeout));
  EXPECT_FALSE(hung.update({'D', 7, 100}, t(299), seconds(45), hung_timeout));
  EXPECT_EQ(hung.update({'D', 7, 100}, t(300), seconds(45), hung_timeout), w::How::Hung);
}

TEST(WatchErrorFile, TheErrorDirectoryIsOpenedWithoutFollowingLinks) {
  char base[] = "/tmp/ddp-watch-test.XXXXXX";
  ASSERT_TRUE(mkdtemp(base));
  const std::string dir = std::string(base) + "/ddp-1.0-n-node0";
  ASSERT_EQ(mkdir(dir.c_str(), 0700), 0);
  std::ofstream(dir + "/rank-3.json") << R"({"message": {"message": "E: x", "extraInfo": {}}})";
  {
    w::ErrorDir d(dir);
    ASSERT_TRUE(d.read(3));
    EXPECT_EQ(d.read(3)->error, "E: x");
    EXPECT_FALSE(d.read(4));
    d.remove({3});
  }
  struct stat st {};
  EXPECT_NE(lstat(dir.c_str(), &st), 0);  // gone with its file
  // A link put where the directory should be (to another user's, or anyone's) is refused.
  const std::string elsewhere = std::string(base) + "/elsewhere";
  ASSERT_EQ(mkdir(elsewhere.c_str(), 0700), 0);
  std::ofstream(elsewhere + "/rank-3.json") << R"({"message": "planted"})";
  ASSERT_EQ(symlink(elsewhere.c_str(), dir.c_str()), 0);
  {
    w::ErrorDir d(dir);
    EXPECT_FALSE(d.read(3));
  }
  unlink(dir.c_str());
  // A directory others may read is refused too; so is a link above it.
  ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
  std::ofstream(dir + "/rank-3.json") << R"({"message": "E"})";
  {
    w::ErrorDir d(dir);
    EXPECT_FALSE(d.read(3));
    EXPECT_NE(d.problem().find("not a private directory"), std::string::npos);
  }
  const std::string via_link = std::string(base) + "/up";
  ASSERT_EQ(symlink(base, via_link.c_str()), 0);
  ASSERT_EQ(chmod(dir.c_str(), 0700), 0);
  {
    w::ErrorDir d(via_link + "/ddp-1.0-n-node0");
    EXPECT_FALSE(d.read(3));
    EXPECT_FALSE(d.problem().empty());
  }
  unlink(via_link.c_str());
  unlink((dir + "/rank-3.json").c_str());
  rmdir(dir.c_str());
  unlink((elsewhere + "/rank-3.json").c_str());
  rmdir(elsewhere.c_str());
  rmdir(base);
}
