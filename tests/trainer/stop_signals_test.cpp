// SIGTERM and SIGUSR1 stop ddp-cifar100 at a step: a rank stops at the step another rank's signal
// decided, and its own copy of the signal (srun delivers it node by node) may come only after it
// has left that step; it must not end the rank on its way out with the checkpoint saved.
#include "stop_signals.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "env_map.hpp"
#include "free_port.hpp"

namespace tr = ddp::trainer;

namespace {

// In a child process: a one-rank group, what `body` returns is the exit status.
int in_child(const std::function<int(ddp::ProcessGroup&)>& body) {
  const pid_t child = fork();
  if (child == 0) {
    ddp::test::EnvMap env;
    env.set("RANK", "0").set("LOCAL_RANK", "0").set("WORLD_SIZE", "1").set("LOCAL_WORLD_SIZE", "1")
        .set("MASTER_ADDR", "127.0.0.1").set("MASTER_PORT", std::to_string(ddp::test::free_port()))
        .set("DDP_BACKEND", "gloo");
    ddp::ProcessGroupOptions options;
    options.env = env.lookup();
    const auto group = ddp::ProcessGroup::create(env.read(), options);
    _exit(body(*group));
  }
  int status = 0;
  waitpid(child, &status, 0);
  return status;
}

}  // namespace

TEST(StopSignals, ALateCopyOfTheSignalDoesNotEndARankThatStopped) {
  const int status = in_child([](ddp::ProcessGroup& group) {
    int agreed = 0;
    {
      tr::StopSignals signals;
      raise(SIGUSR1);
      agreed = tr::agreed_stop(group);
    }
    raise(SIGUSR1);  // the late copy, after the stop
    raise(SIGTERM);
    return agreed == SIGUSR1 ? tr::kExitStopped : 1;
  });
  ASSERT_TRUE(WIFEXITED(status)) << "ended by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), tr::kExitStopped);
}

TEST(StopSignals, WithoutAStopThePreviousHandlersComeBack) {
  const int status = in_child([](ddp::ProcessGroup& group) {
    { tr::StopSignals signals; (void)tr::agreed_stop(group); }
    raise(SIGUSR1);  // its default: the process ends
    return 0;
  });
  ASSERT_TRUE(WIFSIGNALED(status)) << "exited with " << WEXITSTATUS(status);
  EXPECT_EQ(WTERMSIG(status), SIGUSR1);
}
