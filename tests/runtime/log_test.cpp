// Rank-aware logging: the prefix, who prints what, and DDP_LOG_ALL_RANKS.
#include "ddp/log.hpp"

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>

#include <cstdlib>
#include <sstream>

#include "ddp/error.hpp"
#include "env_map.hpp"

using ddp::Context;
using ddp::Logger;
using ddp::LogLevel;

namespace {

Context rank_of(int rank, int world) {
  Context c;
  c.rank = rank;
  c.world_size = world;
  return c;
}

struct Captured {
  std::ostringstream out;
  Logger log;
  Captured(int rank, int world, bool all_ranks = false)
      : log(rank_of(rank, world), all_ranks,
            std::make_shared<spdlog::sinks::ostream_sink_mt>(out)) {}
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

TEST(Logger, FmtStyleArguments) {
  Captured c(0, 2);
  c.log.info("epoch {} loss {:.2f}", 3, 0.5);
  c.log.warn("{} stragglers", 2);
  c.log.error("rank {} failed", 1);
  EXPECT_EQ(c.text(), "[rank 0/2] epoch 3 loss 0.50\n[rank 0/2] warning: 2 stragglers\n"
                      "[rank 0/2] error: rank 1 failed\n");
  Captured quiet(1, 2);
  quiet.log.info("epoch {}", 3);
  quiet.log.error("rank {} failed", 1);
  EXPECT_EQ(quiet.text(), "[rank 1/2] error: rank 1 failed\n");
}

TEST(Logger, BracesInAPlainStringAreText) {
  Captured c(0, 1);
  c.log.info(std::string("config {lr: 0.1}"));
  c.log.info("literal {}");
  EXPECT_EQ(c.text(), "[rank 0/1] config {lr: 0.1}\n[rank 0/1] literal {}\n");
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
