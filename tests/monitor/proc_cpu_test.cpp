// /proc/PID/stat and the CPU time of a process tree.
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>


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
  // A grandchild burns 0.2 s of CPU (its own clock: a loaded machine only makes it take longer)
  // under a child that only waits, then says so through a pipe: the child's tree has that time.
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t parent = fork();
  ASSERT_GE(parent, 0);
  if (parent == 0) {
    setpgid(0, 0);  // one group for the pair, so the test can end both
    if (fork() == 0) {
      timespec used{};
      volatile unsigned long x = 0;
      do {
        for (int i = 0; i < 100000; ++i) ++x;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &used);
      } while (used.tv_sec == 0 && used.tv_nsec < 200000000);
      (void)!write(ready[1], "x", 1);
    }
    for (;;) pause();
  }
  setpgid(parent, parent);
  close(ready[1]);
  pollfd p = {ready[0], POLLIN, 0};
  const bool burnt = poll(&p, 1, 60000) == 1;
  close(ready[0]);
  const auto ticks = ProcessTrees("/proc", 0).ticks({parent, 999999999});
  const auto without = ProcessTrees("/proc", parent).ticks({parent});
  kill(-parent, SIGKILL);  // before any check can return early
  waitpid(parent, nullptr, 0);
  ASSERT_TRUE(burnt);
  ASSERT_EQ(ticks.count(parent), 1u);
  EXPECT_EQ(ticks.count(999999999), 0u);
  const long hz = sysconf(_SC_CLK_TCK);
  EXPECT_GE(ticks.at(parent), static_cast<std::uint64_t>(hz / 10));  // >= 0.1 s of the 0.2 s
  // Leaving the parent out leaves its whole tree out.
  EXPECT_EQ(without.count(parent), 0u);
}
