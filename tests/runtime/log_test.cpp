// Rank-aware logging: the prefix, who prints what, and DDP_LOG_ALL_RANKS.
#include "ddp/log.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "ddp/error.hpp"
#include "env_map.hpp"

using ddp::Context;
using ddp::Logger;
using ddp::LogLevel;
using ddp::LogSink;

namespace {

Context rank_of(int rank, int world) {
  Context c;
  c.rank = rank;
  c.world_size = world;
  return c;
}

LogSink to(std::ostringstream& out) {
  return [&out](LogLevel, const std::string& lines) { out << lines << "\n"; };
}

struct Captured {
  std::ostringstream out;
  Logger log;
  Captured(int rank, int world, bool all_ranks = false)
      : log(rank_of(rank, world), all_ranks, to(out)) {}
  std::string text() const { return out.str(); }
};

}  // namespace

TEST(LogFormat, EveryLineStartsWithTheRank) {
  const Context c = rank_of(3, 8);
  EXPECT_EQ(ddp::format_log_line(c, LogLevel::Info, "hello"), "[rank 3/8] hello");
  EXPECT_EQ(ddp::format_log_line(c, LogLevel::Warn, "slow"), "[rank 3/8] warning: slow");
  EXPECT_EQ(ddp::format_log_line(c, LogLevel::Error, "boom"), "[rank 3/8] error: boom");
}

TEST(LogFormat, EachLineOfAMultiLineMessageIsPrefixed) {
  const Context c = rank_of(1, 2);
  EXPECT_EQ(ddp::format_log_line(c, LogLevel::Error, "a\nb\n"),
            "[rank 1/2] error: a\n[rank 1/2] error: b");
  EXPECT_EQ(ddp::format_log_line(c, LogLevel::Info, ""), "[rank 1/2] ");
  EXPECT_EQ(ddp::format_log_line(c, LogLevel::Info, "a\n\nb"),
            "[rank 1/2] a\n[rank 1/2] \n[rank 1/2] b");
}

TEST(Logger, RankZeroPrintsInfoAndWarnings) {
  Captured c(0, 4);
  c.log.info("start");
  c.log.warn("slow");
  c.log.error("boom");
  EXPECT_EQ(c.text(), "[rank 0/4] start\n[rank 0/4] warning: slow\n[rank 0/4] error: boom\n");
}

TEST(Logger, OtherRanksPrintOnlyErrors) {
  Captured c(2, 4);
  c.log.info("start");
  c.log.warn("slow");
  c.log.error("boom");
  EXPECT_EQ(c.text(), "[rank 2/4] error: boom\n");
  EXPECT_FALSE(c.log.prints(LogLevel::Info));
  EXPECT_TRUE(c.log.prints(LogLevel::Error));
}

TEST(Logger, AllRanksOnRequest) {
  Captured c(2, 4, true);
  c.log.info("start");
  c.log.warn("slow");
  EXPECT_EQ(c.text(), "[rank 2/4] start\n[rank 2/4] warning: slow\n");
}

TEST(Logger, BracesInAPlainStringAreText) {
  Captured c(0, 1);
  c.log.info(std::string("config {lr: 0.1}"));
  c.log.info("literal {}");
  EXPECT_EQ(c.text(), "[rank 0/1] config {lr: 0.1}\n[rank 0/1] literal {}\n");
}

TEST(Logger, TheSinkGetsTheLevelAndAMultiLineMessageInOneCall) {
  std::vector<std::pair<LogLevel, std::string>> calls;
  const Logger log(rank_of(0, 2), false,
                   [&calls](LogLevel level, const std::string& lines) { calls.emplace_back(level, lines); });
  log.warn("first\nsecond\n");
  log.info("done");
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].first, LogLevel::Warn);
  EXPECT_EQ(calls[0].second, "[rank 0/2] warning: first\n[rank 0/2] warning: second");
  EXPECT_EQ(calls[1].first, LogLevel::Info);
  EXPECT_EQ(calls[1].second, "[rank 0/2] done");
}

TEST(Logger, AnEmptySinkIsRefused) {
  EXPECT_THROW(Logger(rank_of(0, 1), false, LogSink()), ddp::Error);
}

// Threads of one rank share its Logger (and copies of it): the sink is never entered twice at
// once, so a sink needs no lock of its own.
TEST(Logger, SinkCallsNeverOverlap) {
  std::atomic<bool> inside{false};
  std::atomic<int> overlaps{0}, calls{0};
  const Logger log(rank_of(0, 1), false, [&](LogLevel, const std::string&) {
    if (inside.exchange(true)) ++overlaps;
    std::this_thread::yield();
    ++calls;
    inside = false;
  });
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([copy = log] {
      for (int i = 0; i < 200; ++i) copy.info("step");
    });
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(calls, 800);
  EXPECT_EQ(overlaps, 0);
}

TEST(Logger, DefaultSinkSendsInfoToStdoutAndErrorsToStderr) {
  const Logger log(rank_of(0, 2));
  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  log.info("progress");
  log.warn("careful");
  log.error("broken");
  const std::string out = testing::internal::GetCapturedStdout();
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(out, "[rank 0/2] progress\n");
  EXPECT_EQ(err, "[rank 0/2] warning: careful\n[rank 0/2] error: broken\n");
}

TEST(LogEnv, AllRanksFromTheEnvironment) {
  ddp::test::EnvMap env;
  EXPECT_FALSE(ddp::log_all_ranks_from_env(env.lookup()));
  for (const char* yes : {"1", "true", "yes", "on"})
    EXPECT_TRUE(ddp::log_all_ranks_from_env(env.set("DDP_LOG_ALL_RANKS", yes).lookup())) << yes;
  for (const char* no : {"0", "false", "no", "off", ""})
    EXPECT_FALSE(ddp::log_all_ranks_from_env(env.set("DDP_LOG_ALL_RANKS", no).lookup())) << no;
}

TEST(LogEnv, AnythingElseIsAnErrorNamingTheVariable) {
  ddp::test::EnvMap env;
  env.set("DDP_LOG_ALL_RANKS", "maybe");
  try {
    ddp::log_all_ranks_from_env(env.lookup());
    FAIL() << "no error";
  } catch (const ddp::Error& e) {
    EXPECT_NE(std::string(e.what()).find("DDP_LOG_ALL_RANKS='maybe' is not a yes/no value"),
              std::string::npos)
        << e.what();
  }
}

TEST(LogEnv, TheDefaultLoggerReadsIt) {
  ::setenv("DDP_LOG_ALL_RANKS", "1", 1);
  const Logger log(rank_of(3, 4));
  ::unsetenv("DDP_LOG_ALL_RANKS");
  EXPECT_TRUE(log.prints(LogLevel::Info));
  EXPECT_FALSE(Logger(rank_of(3, 4)).prints(LogLevel::Info));
}

// The first error is the rank's word for the failure watch: written where torch's @record would
// write a Python exception (TORCHELASTIC_ERROR_FILE), in torch's format; later errors leave it.
TEST(Logger, TheFirstErrorGoesToTheErrorFileInTorchsFormat) {
  char dir[] = "/tmp/ddp-log-test.XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string file = std::string(dir) + "/rank-1.json";
  setenv("TORCHELASTIC_ERROR_FILE", file.c_str(), 1);
  Context ctx;
  ctx.rank = 1;
  ctx.world_size = 2;
  std::vector<std::string> seen;
  Logger log(ctx, false, [&](LogLevel, const std::string& lines) { seen.push_back(lines); });
  log.warn("not an error");
  log.error("all-reduce of gradients failed: \"quoted\"");
  log.error("a later error");
  unsetenv("TORCHELASTIC_ERROR_FILE");
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str().rfind(R"({"message":{"extraInfo":{"py_callstack":"","timestamp":")", 0), 0u)
      << text.str();
  EXPECT_NE(text.str().find(R"("message":"all-reduce of gradients failed: \"quoted\""})"),
            std::string::npos)
      << text.str();
  EXPECT_EQ(seen.size(), 2u);  // the errors are still logged
  unlink(file.c_str());
  rmdir(dir);
}
