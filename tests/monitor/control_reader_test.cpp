// slurmstepd's reading of the control channel: a pidfd is taken only with the launcher's first
// line and only for the PID it names; whatever comes later is the user's word and bounded.
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "control_reader.hpp"
#include "pidfd.hpp"

using namespace ddp::monitor;

namespace {

struct Channel {
  int stepd = -1, other = -1;
  Channel() {
    int fds[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) std::abort();
    stepd = fds[0];
    other = fds[1];
  }
  ~Channel() {
    ::close(stepd);
    if (other >= 0) ::close(other);
  }
  // One message, with a descriptor attached when fd >= 0.
  void send(const std::string& text, int fd = -1) const {
    ASSERT_TRUE(send_line_with_fd(other, text.data(), text.size(), fd));
  }
};

// A child that waits to be killed, and its pidfd.
struct Child {
  pid_t pid = ::fork();
  int pidfd = -1;
  Child() {
    if (pid == 0) {
      ::pause();
      ::_exit(0);
    }
    pidfd = open_pidfd(pid);
  }
  ~Child() {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    if (pidfd >= 0) ::close(pidfd);
  }
};

std::size_t open_descriptors() {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) ++n;
  return n;
}

double soon() { return monotonic_seconds() + 2; }

}  // namespace

TEST(ControlReader, TheLaunchersPidfdOfTheSamplerIsTaken) {
  Child sampler;
  if (sampler.pidfd < 0) GTEST_SKIP() << "no pidfds on this kernel";
  Channel ch;
  ch.send("sampler " + std::to_string(sampler.pid) + "\n", sampler.pidfd);
  ch.send("hello 1 2\ndone\n");
  Heard h;
  EXPECT_EQ(drain(ch.stepd, h, soon()), Drained::Done);
  EXPECT_TRUE(h.launched);
  EXPECT_EQ(h.sampler, sampler.pid);
  ASSERT_GE(h.pidfd, 0);
  EXPECT_EQ(pidfd_pid(h.pidfd), sampler.pid);
  EXPECT_TRUE(h.hello);
}

TEST(ControlReader, APidfdOfAnotherProcessIsClosedUnused) {
  Child sampler, victim;
  if (sampler.pidfd < 0) GTEST_SKIP() << "no pidfds on this kernel";
  Channel ch;
  const std::size_t before = open_descriptors();
  {
    Heard h;
    ch.send("sampler " + std::to_string(sampler.pid) + "\n", victim.pidfd);
    EXPECT_EQ(drain(ch.stepd, h, soon()), Drained::More);
    EXPECT_TRUE(h.launched);
    EXPECT_EQ(h.pidfd, -1);
    EXPECT_EQ(open_descriptors(), before);
  }
}

TEST(ControlReader, DescriptorsAfterTheFirstLineAreClosedUnused) {
  Child sampler, victim;
  if (sampler.pidfd < 0) GTEST_SKIP() << "no pidfds on this kernel";
  Channel ch;
  const std::size_t before = open_descriptors();
  Heard h;
  ch.send("sampler " + std::to_string(sampler.pid) + "\n");  // the launcher could pass none
  ch.send("sampler " + std::to_string(victim.pid) + "\n", victim.pidfd);
  ch.send("hello 5 6\n", victim.pidfd);
  EXPECT_EQ(drain(ch.stepd, h, soon()), Drained::More);
  EXPECT_EQ(h.sampler, sampler.pid);
  EXPECT_EQ(h.pidfd, -1);
  EXPECT_EQ(open_descriptors(), before);
}

TEST(ControlReader, AFirstLineThatIsNotTheLaunchersStartsNothing) {
  Child victim;
  if (victim.pidfd < 0) GTEST_SKIP() << "no pidfds on this kernel";
  Channel ch;
  Heard h;
  ch.send("hello " + std::to_string(victim.pid) + " 1\n", victim.pidfd);
  EXPECT_EQ(drain(ch.stepd, h, soon()), Drained::More);
  EXPECT_FALSE(h.launched);
  EXPECT_FALSE(h.hello);
  EXPECT_EQ(h.pidfd, -1);
}

TEST(ControlReader, AFloodEndsAtTheLimitsWithinTheDeadline) {
  Channel ch;
  ch.send("sampler 42\n");
  // More than the channel holds: the writer keeps the socket full while the reader reads.
  const pid_t writer = ::fork();
  if (writer == 0) {
    const std::string line = std::string(100, 'y') + "\n";
    while (::send(ch.other, line.data(), line.size(), MSG_NOSIGNAL) > 0) {
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
  ch.send("sampler 42\ndone\n");
  Heard h;
  EXPECT_EQ(drain(ch.stepd, h, monotonic_seconds() - 1), Drained::More);
  EXPECT_FALSE(h.launched);
}

TEST(ControlReader, TheEndOfTheStreamIsDone) {
  Channel ch;
  ch.send("sampler 42\n");
  ::close(ch.other);
  ch.other = -1;
  Heard h;
  EXPECT_EQ(drain(ch.stepd, h, soon()), Drained::Done);
  EXPECT_TRUE(h.launched);
}
