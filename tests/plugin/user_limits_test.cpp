// Helpers started beside the task get the limits Slurm will give the task.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helper_process.hpp"
#include "user_limits.hpp"

namespace p = ddp::plan;

namespace {

p::Propagation conf_propagates_all_but_memlock(std::string_view name) {
  return name == "MEMLOCK" ? p::Propagation::No : p::Propagation::Yes;
}

const p::UserLimit* find(const p::UserLimits& l, int resource) {
  for (std::size_t i = 0; i < l.count; ++i)
    if (l.limits[i].resource == resource) return &l.limits[i];
  return nullptr;
}

}  // namespace

TEST(UserLimits, AsSlurmPropagatesThem) {
  const std::vector<std::string_view> env = {
      "PATH=/bin",          "SLURM_RLIMIT_NOFILE=1024", "SLURM_RLIMIT_MEMLOCK=65536",
      "SLURM_RLIMIT_CORE=U0", "SLURM_RLIMIT_STACK=8388608x", "SLURM_RLIMIT_NPROC=",
      "SLURM_RLIMIT_NOFILEX=7"};
  const p::UserLimits l = p::user_limits(env, conf_propagates_all_but_memlock);
  ASSERT_TRUE(find(l, RLIMIT_NOFILE));
  EXPECT_EQ(find(l, RLIMIT_NOFILE)->soft, 1024u);
  EXPECT_FALSE(find(l, RLIMIT_MEMLOCK));  // PropagateResourceLimitsExcept=MEMLOCK
  ASSERT_TRUE(find(l, RLIMIT_CORE));      // --propagate=CORE wins over the site's rule
  EXPECT_EQ(find(l, RLIMIT_CORE)->soft, 0u);
  EXPECT_FALSE(find(l, RLIMIT_STACK));  // Slurm rejects the value too
  EXPECT_FALSE(find(l, RLIMIT_NPROC));
  EXPECT_EQ(l.count, 2u);
}

TEST(UserLimits, AnUnknownRuleLeavesALimitAsItIs) {
  const p::UserLimits l = p::user_limits({"SLURM_RLIMIT_NOFILE=1024", "SLURM_RLIMIT_CORE=U0"},
                                         [](std::string_view) { return p::Propagation::Unknown; });
  EXPECT_FALSE(find(l, RLIMIT_NOFILE));
  EXPECT_TRUE(find(l, RLIMIT_CORE));
}

TEST(UserLimits, AppliedInAForkedChildNeverAboveTheHardLimit) {
  rlimit now{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &now), 0);
  ASSERT_GT(now.rlim_max, 200u);
  p::UserLimits l;
  l.limits[l.count++] = {RLIMIT_NOFILE, 200};
  l.limits[l.count++] = {RLIMIT_CORE, 0};
  p::UserLimits above;
  above.limits[above.count++] = {RLIMIT_NOFILE, now.rlim_max == RLIM_INFINITY ? now.rlim_max
                                                                               : now.rlim_max + 1};
  const auto in_child = [](const p::UserLimits& limits, rlim_t expect) {
    const pid_t pid = fork();
    if (pid == 0) {
      ddp::spank::apply_user_limits(limits);
      rlimit r{};
      getrlimit(RLIMIT_NOFILE, &r);
      _exit(r.rlim_cur == expect ? 0 : 1);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
  };
  EXPECT_TRUE(in_child(l, 200));
  if (now.rlim_max != RLIM_INFINITY) {
    EXPECT_TRUE(in_child(above, now.rlim_cur));
  }
}

// Outside slurmstepd nobody has read slurm.conf's propagation rule: only what the user asked for
// with --propagate is taken.
TEST(UserLimits, OutsideSlurmstepdOnlyWhatTheUserAsked) {
  char nofile[] = "SLURM_RLIMIT_NOFILE=1024";
  char core[] = "SLURM_RLIMIT_CORE=U0";
  char* env[] = {nofile, core, nullptr};
  const p::UserLimits l = ddp::spank::task_limits(env);
  EXPECT_FALSE(find(l, RLIMIT_NOFILE));
  EXPECT_TRUE(find(l, RLIMIT_CORE));
}
