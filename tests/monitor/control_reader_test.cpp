// slurmstepd's reading of the control channel: the identity pipe names the helper's process;
// slurmstepd opens that process's pidfd itself, and only while the PID is still the process that
// started at the line's START. What the helper says on its pipe is the user's word, and bounded.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "control_reader.hpp"
#include "pidfd.hpp"
#include "proc_stat.hpp"

using namespace ddp::monitor;

namespace {

// slurmstepd's read end, and the helper's write end.
struct Channel {
  int stepd = -1, helper = -1;
  Channel() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) std::abort();
    stepd = fds[0];
    helper = fds[1];
  }
  ~Channel() {
    ::close(stepd);
    if (helper >= 0) ::close(helper);
  }
  void write(const std::string& text) const {
    ASSERT_EQ(::write(helper, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  }
};

// A child that waits to be killed; its own first line, as the plugin's launcher writes it.
struct Child {
  pid_t pid = ::fork();
  Child() {
    if (pid == 0) {
      ::pause();
      ::_exit(0);
    }
  }
  ~Child() {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
  }
  std::uint64_t start() const { return read_proc_stat("/proc", pid)->start_time; }
  std::string line(std::uint64_t start) const {
    return "helper " + std::to_string(pid) + " " + std::to_string(start) + "\n";
  }
};

bool have_pidfds() {
  const int fd = open_pidfd(::getpid());
  if (fd < 0) return false;
  ::close(fd);
  return true;
}

double soon() { return monotonic_seconds() + 2; }

}  // namespace

TEST(ControlReader, TheIdentitysProcessGetsAPidfdThatReachesIt) {
  if (!have_pidfds()) GTEST_SKIP() << "no pidfds on this kernel";
  Child helper;
  Channel identity, ch;
  identity.write(helper.line(helper.start()));
  ch.write("done\n");
  Heard h;
  take_identity(identity.stepd, h);
  EXPECT_EQ(drain(ch.stepd, h, soon()), Drained::Done);
  EXPECT_TRUE(h.launched);
  EXPECT_EQ(h.pid, helper.pid);
  ASSERT_GE(h.pidfd, 0);
  EXPECT_FALSE(pidfd_ended(h.pidfd));
  ASSERT_TRUE(signal_pidfd(h.pidfd, SIGKILL));
  int status = 0;
  ASSERT_EQ(::waitpid(helper.pid, &status, 0), helper.pid);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
}

// The PID went to another process since the line was written: it gets no pidfd, and is not the
// same process for the kill without one.
TEST(ControlReader, APidNowOfAnotherProcessGetsNoPidfd) {
  Child other;
  Channel identity;
  identity.write(other.line(other.start() + 1));
  Heard h;
  take_identity(identity.stepd, h);
  EXPECT_TRUE(h.launched);
  EXPECT_EQ(h.pidfd, -1);
  EXPECT_FALSE(same_process(other.pid, other.start() + 1));
  EXPECT_TRUE(same_process(other.pid, other.start()));
}

TEST(ControlReader, AnEndedHelperIsNoLongerTheSameProcess) {
  Child helper;
  const std::uint64_t start = helper.start();
  ::kill(helper.pid, SIGKILL);
  // Not reaped yet: a zombie, which nothing may signal as if it were the helper.
  for (int i = 0; i < 200 && same_process(helper.pid, start); ++i) ::usleep(10000);
  EXPECT_FALSE(same_process(helper.pid, start));
  Channel identity;
  identity.write(helper.line(start));
  Heard h;
  take_identity(identity.stepd, h);
  EXPECT_TRUE(h.launched);
  EXPECT_EQ(h.pidfd, -1);
}

// The helper's own channel is the user's: a line there naming another process names nothing.
TEST(ControlReader, OnlyTheIdentityPipeNamesTheHelper) {
  Child victim;
  Channel identity, ch;
  ch.write(victim.line(victim.start()) + "done\n");
  Heard h;
  take_identity(identity.stepd, h);
  EXPECT_EQ(drain(ch.stepd, h, soon()), Drained::Done);
  EXPECT_FALSE(h.launched);
  EXPECT_EQ(h.pidfd, -1);
}

TEST(ControlReader, AnIdentityThatIsNotOneLineIsNone) {
  Child helper;
  for (const std::string& text : std::vector<std::string>{helper.line(helper.start()).substr(0, 10),
                                 "task 0 0 1\n", "helper x y\n"}) {
    Channel identity;
    identity.write(text);
    Heard h;
    take_identity(identity.stepd, h);
    EXPECT_FALSE(h.launched) << text;
  }
}

TEST(ControlReader, AFloodEndsAtTheLimitsWithinTheDeadline) {
  Channel ch;
  // More than the channel holds: the writer keeps the pipe full while the reader reads.
  const pid_t writer = ::fork();
  if (writer == 0) {
    const std::string line = std::string(100, 'y') + "\n";
    ::fcntl(ch.helper, F_SETFL, 0);
    while (::write(ch.helper, line.data(), line.size()) > 0) {
    }
    ::_exit(0);
  }
  Heard h;
  const double start = monotonic_seconds();
  Drained state = Drained::More;
  // As slurmstepd reads: what has arrived, then wait for more, until the deadline.
  while (state == Drained::More && monotonic_seconds() < start + 5) {
    pollfd p = {ch.stepd, POLLIN, 0};
    ::poll(&p, 1, 100);
    state = drain(ch.stepd, h, start + 5);
  }
  EXPECT_EQ(state, Drained::Overflow);
  EXPECT_LT(monotonic_seconds() - start, 5.0);
  EXPECT_TRUE(h.lines.overflowed());
  ::kill(writer, SIGKILL);
  ::waitpid(writer, nullptr, 0);
}

TEST(ControlReader, ADeadlineInThePastReadsNothing) {
  Channel ch;
  ch.write("done\n");
  Heard h;
  EXPECT_EQ(drain(ch.stepd, h, monotonic_seconds() - 1), Drained::More);
}

TEST(ControlReader, TheEndOfTheStreamIsDone) {
  Channel ch;
  ch.write("task 0 0 1\n");
  ::close(ch.helper);
  ch.helper = -1;
  Heard h;
  EXPECT_EQ(drain(ch.stepd, h, soon()), Drained::Done);
}

TEST(ProcStat, OwnStartTimeIsProcsStartTime) {
  EXPECT_EQ(own_start_time(), read_proc_stat("/proc", ::getpid())->start_time);
}
