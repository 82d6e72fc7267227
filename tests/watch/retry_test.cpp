// --ddp-retries' decision on recorded verdicts: which failures name a node, what is retried, and
// what the job's output says.
#include "retry.hpp"

#include <gtest/gtest.h>

#include <csignal>

namespace w = ddp::watch;
using Kind = w::RetryDecision::Kind;

namespace {

w::Verdict verdict(w::How how, unsigned rank, const std::string& host, int code = 0, unsigned seconds = 0) {
  w::Verdict v;
  v.first.how = how;
  v.first.rank = rank;
  v.first.host = host;
  v.first.code = code;
  v.first.seconds = seconds;
  return v;
}

}  // namespace

TEST(WatchRetry, OffSaysNothing) {
  const auto d = w::decide_retry(verdict(w::How::Signal, 5, "n3", SIGKILL), {0, 0});
  EXPECT_EQ(d.kind, Kind::Off);
  EXPECT_TRUE(d.line.empty());
}

TEST(WatchRetry, AKilledRankExcludesItsNode) {
  const auto d = w::decide_retry(verdict(w::How::Signal, 5, "n3", SIGKILL), {2, 0});
  EXPECT_EQ(d.kind, Kind::Retry);
  EXPECT_EQ(d.nodes, std::vector<std::string>{"n3"});
  EXPECT_EQ(d.line, "asking Slurm to requeue the job for attempt 2 of 3, without n3 (rank 5 on n3 was killed by signal 9 "
                    "(SIGKILL))");
}

TEST(WatchRetry, StoppedHungAndSilentNameTheirNode) {
  for (const auto how : {w::How::Stopped, w::How::Hung, w::How::Silent}) {
    auto v = verdict(how, 4, "n2", 0, 60);
    v.first.ranks = "4-7";
    const auto d = w::decide_retry(v, {1, 0});
    EXPECT_EQ(d.kind, Kind::Retry);
    EXPECT_EQ(d.nodes, std::vector<std::string>{"n2"});
    EXPECT_NE(d.line.find("asking Slurm to requeue the job for attempt 2 of 2, without n2"), std::string::npos) << d.line;
  }
  const auto silent = w::decide_retry(verdict(w::How::Silent, 4, "n2", 0, 60), {1, 0});
  EXPECT_NE(silent.line.find("(node n2 has not answered the failure watch for 60 s"), std::string::npos)
      << silent.line;
}

TEST(WatchRetry, AnExitCodeNamesNoNodeAndIsNeverRetried) {
  const auto d = w::decide_retry(verdict(w::How::Exit, 0, "n1", 1), {3, 0});
  EXPECT_EQ(d.kind, Kind::NoNode);
  EXPECT_TRUE(d.nodes.empty());
  EXPECT_EQ(d.line, "not retried (--ddp-retries=3): rank 0 exited with code 1, a failure of the "
                    "program that names no node; another attempt would fail the same way");
}

TEST(WatchRetry, AFailureOnANodeWithoutANameIsNotRetried) {
  auto v = verdict(w::How::Silent, 8, "", 0, 45);
  v.first.node = 2;
  const auto d = w::decide_retry(v, {1, 0});
  EXPECT_EQ(d.kind, Kind::NoNode);
  EXPECT_NE(d.line.find("node 2 of the step"), std::string::npos) << d.line;
}

TEST(WatchRetry, TheLastAttemptIsNotRetried) {
  const auto v = verdict(w::How::Signal, 1, "n2", SIGBUS);
  EXPECT_EQ(w::decide_retry(v, {2, 1}).kind, Kind::Retry);
  const auto d = w::decide_retry(v, {2, 2});
  EXPECT_EQ(d.kind, Kind::Exhausted);
  EXPECT_EQ(d.nodes, std::vector<std::string>{"n2"});  // for the --exclude= to resubmit with
  EXPECT_EQ(d.attempt, 3u);
  EXPECT_EQ(d.line, "not retried: attempt 3 failed, and the job was requeued 2 times already "
                    "(--ddp-retries=2): rank 1 on n2 was killed by signal 7 (SIGBUS)");
  // Requeues for other causes (preemption, a node failure) count against the retries too.
  EXPECT_EQ(w::decide_retry(v, {2, 5}).kind, Kind::Exhausted);
}

TEST(WatchRetry, ThePreflightNamesItsNodesItself) {
  const std::string what = "ddp-preflight: n1 <-> n3: bus bandwidth 0.003 GB/s is below min_busbw_gbps=0.05";
  const auto d = w::decide_retry(std::vector<std::string>{"n3", "n5"}, what, {1, 0});
  EXPECT_EQ(d.kind, Kind::Retry);
  EXPECT_EQ(d.nodes, (std::vector<std::string>{"n3", "n5"}));
  EXPECT_EQ(d.line, "asking Slurm to requeue the job for attempt 2 of 2, without n3,n5 (" + what + ")");
  const auto none = w::decide_retry(std::vector<std::string>{}, "ddp-preflight: all ranks: latency too high", {1, 0});
  EXPECT_EQ(none.kind, Kind::NoNode);
  EXPECT_EQ(none.line, "not retried (--ddp-retries=1): ddp-preflight: all ranks: latency too high, which "
                       "names no node to leave out; another attempt would fail the same way");
  EXPECT_EQ(w::decide_retry(std::vector<std::string>{"n3"}, what, {1, 1}).kind, Kind::Exhausted);
  EXPECT_EQ(w::decide_retry(std::vector<std::string>{"n3"}, what, {0, 0}).kind, Kind::Off);
}

TEST(WatchRetry, ACrashOfTheProgramNamesNoNode) {
  for (const int sig : {SIGSEGV, SIGABRT, SIGFPE, SIGPIPE}) {
    const auto d = w::decide_retry(verdict(w::How::Signal, 2, "n2", sig), {1, 0});
    EXPECT_EQ(d.kind, Kind::NoNode) << sig;
    EXPECT_NE(d.line.find("a crash of the program that names no node"), std::string::npos) << d.line;
  }
  EXPECT_TRUE(w::names_its_node(SIGKILL));
  EXPECT_TRUE(w::names_its_node(SIGBUS));
}

// A head cut off from the network finds every member silent, and would name a healthy one.
TEST(WatchRetry, SeveralSilentNodesNameNoNode) {
  auto v = verdict(w::How::Silent, 4, "n2", 0, 45);
  v.other_silent_nodes = 2;
  const auto d = w::decide_retry(v, {1, 0});
  EXPECT_EQ(d.kind, Kind::NoNode);
  EXPECT_EQ(d.line, "not retried (--ddp-retries=1): 3 nodes stopped answering the failure watch at "
                    "once: the network, not one node");
}
