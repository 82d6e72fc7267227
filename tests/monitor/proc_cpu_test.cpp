// /proc/PID/stat and the CPU time of a process tree.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "proc_cpu.hpp"

using namespace ddp::monitor;

TEST(MonitorProc, StatLinesWithAwkwardCommandNames) {
  const std::string line =
      "4242 (py (worker) 1) S 4200 4242 4200 0 -1 4194560 100 0 0 0 250 50 7 3 20 0 4 0 "
      "123456 1000 10 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 3 0 0 0 0 0\n";
  const auto s = parse_proc_stat(line);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->pid, 4242);
  EXPECT_EQ(s->ppid, 4200);
  EXPECT_EQ(s->state, 'S');
  EXPECT_EQ(s->ticks, 250u + 50 + 7 + 3);
  EXPECT_EQ(s->start_time, 123456u);
  EXPECT_FALSE(parse_proc_stat("not a stat line"));
  EXPECT_FALSE(parse_proc_stat("12 (x) S 1 2"));
}

TEST(MonitorProc, ATreeCountsItsChildrenAndSkipsTheExcluded) {
  // A child that burns CPU for ~0.3 s under a parent that only waits: the parent's tree has it.
  const pid_t parent = fork();
  ASSERT_GE(parent, 0);
  setpgid(parent, parent);
  if (parent == 0) {
    setpgid(0, 0);  // one group for the pair, so the test can end both
    const pid_t child = fork();
    if (child == 0) {
      const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
      volatile unsigned long x = 0;
      while (std::chrono::steady_clock::now() < until) ++x;
      pause();
    }
    pause();
    _exit(0);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  const auto ticks = ProcessTrees("/proc", 0).ticks({parent, 999999999});
  const auto without = ProcessTrees("/proc", parent).ticks({parent});
  kill(-parent, SIGKILL);  // before any check can return early
  waitpid(parent, nullptr, 0);
  ASSERT_EQ(ticks.count(parent), 1u);
  EXPECT_EQ(ticks.count(999999999), 0u);
  const long hz = sysconf(_SC_CLK_TCK);
  EXPECT_GE(ticks.at(parent), static_cast<std::uint64_t>(hz / 10));  // >= 0.1 s of CPU
  // Leaving the parent out leaves its whole tree out.
  EXPECT_EQ(without.count(parent), 0u);
}
