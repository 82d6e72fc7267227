#include "helper_channel.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>

#include "control.hpp"
#include "helper_process.hpp"
#include "plugin_state.hpp"
#include "proc_stat.hpp"

namespace ddp::spank {
namespace {

// Decimal digits without allocation, for the forked children.
std::size_t decimal(char* out, long v) {
  char tmp[24];
  std::size_t n = 0;
  do {
    tmp[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v > 0 && n < sizeof tmp);
  for (std::size_t i = 0; i < n; ++i) out[i] = tmp[n - 1 - i];
  return n;
}

// Never blocks: slurmstepd must not wait on a helper that does not read.
void send_all(int fd, const char* text, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::send(fd, text, size, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    text += n;
    size -= static_cast<std::size_t>(n);
  }
}

// The launcher's "helper PID" line, with a pidfd of the helper attached when the kernel has
// pidfds (async-signal-safe: sendmsg only).
void send_helper_line(int fd, const char* text, std::size_t size, int pidfd) {
  iovec iov = {const_cast<char*>(text), size};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  if (pidfd >= 0) {
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &pidfd, sizeof(int));
  }
  while (::sendmsg(fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT) < 0 && errno == EINTR) {
  }
}

// The real and effective user of a process, from /proc/PID/status.
std::optional<std::pair<uid_t, uid_t>> process_uids(long pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string key;
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    long real = -1, effective = -1;
    if (fields >> key && key == "Uid:" && fields >> real >> effective && real >= 0 && effective >= 0)
      return std::make_pair(static_cast<uid_t>(real), static_cast<uid_t>(effective));
  }
  return std::nullopt;
}

double monotonic() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// What slurmstepd has heard on the channel. Everything after the launcher's first line is the
// user's word: the helper runs the job's environment, LD_PRELOAD included.
struct Heard {
  monitor::LineBuffer lines;
  bool launched = false;  // "helper PID" from the launcher
  bool first = true;      // no byte read yet: only the launcher's line may carry a descriptor
  int pidfd = -1;         // the helper's, from the launcher
  long pid = 0;           // from hello, for kernels without pidfds
  std::uint64_t start_time = 0;
  bool hello = false;
  ~Heard() {
    if (pidfd >= 0) ::close(pidfd);
  }
};

enum class Drained { More, Done, Overflow };

// One recvmsg that keeps a descriptor only from the launcher's line (the first bytes on the
// channel, sent before the helper may run); any other is closed unread, so that a helper cannot
// hand root a pidfd of a process that is not its own.
ssize_t receive(int fd, char* buf, std::size_t size, Heard& h) {
  iovec iov = {buf, size};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))];
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  const ssize_t n = ::recvmsg(fd, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
  if (n < 0) return n;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    const std::size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (std::size_t i = 0; i < count; ++i) {
      int passed = -1;
      std::memcpy(&passed, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
      if (h.first && h.pidfd < 0 && passed >= 0)
        h.pidfd = passed;
      else if (passed >= 0)
        ::close(passed);
    }
  }
  if (n > 0) h.first = false;
  return n;
}

// Reads what has arrived, without blocking and never past `deadline` or the channel's limits.
Drained drain(int fd, Heard& h, double deadline) {
  char buf[512];
  while (monotonic() < deadline) {
    const ssize_t n = receive(fd, buf, sizeof buf, h);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return Drained::More;
    if (n <= 0) return Drained::Done;  // end of stream: the helper has gone
    if (!h.lines.feed(buf, static_cast<std::size_t>(n))) return Drained::Overflow;
    while (const auto line = h.lines.next()) {
      const auto m = monitor::parse_control(*line);
      if (!m) continue;
      if (m->kind == monitor::ControlMessage::Kind::Launched) h.launched = true;
      if (m->kind == monitor::ControlMessage::Kind::Hello) {
        h.hello = true;
        h.pid = m->pid;
        h.start_time = m->start_time;
      }
      if (m->kind == monitor::ControlMessage::Kind::Done) return Drained::Done;
    }
    if (h.lines.overflowed()) return Drained::Overflow;
  }
  return Drained::More;
}

// SIGKILL to the helper: through its pidfd; without one (kernels before 5.3) only if the PID is
// still the very process that said hello, and of the job's own user.
bool kill_helper(const Heard& h, uid_t job_uid) {
  if (h.pidfd >= 0) return !pidfd_ended(h.pidfd) && signal_pidfd(h.pidfd, SIGKILL);
  if (!h.hello) return false;
  const auto now = monitor::read_proc_stat("/proc", h.pid);
  const auto uids = process_uids(h.pid);
  const bool users = uids && uids->first == job_uid && uids->second == job_uid;
  if (!now || now->start_time != h.start_time || now->state == 'Z' || !users) return false;
  return ::kill(static_cast<pid_t>(h.pid), SIGKILL) == 0;
}

std::vector<char*> c_strings(std::vector<std::string>& v) {
  std::vector<char*> out;
  for (auto& s : v) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

}  // namespace

bool HelperChannel::open(spank_t sp) {
  if (spank_get_item(sp, S_JOB_UID, &job_uid_) != ESPANK_SUCCESS) return false;
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
    slurm_info("spank_ddp: no %s channel: socketpair: %s", texts_.option, std::strerror(errno));
    return false;
  }
  stepd_end_ = fds[0];
  helper_end_ = fds[1];
  return true;
}

void HelperChannel::send(const std::string& line) const {
  if (stepd_end_ >= 0) send_all(stepd_end_, line.data(), line.size());
}

void HelperChannel::refuse(const std::string& why) const {
  tell_user(std::string("warning: ") + texts_.option + ": " + why + "; " + texts_.without);
}

// Ends the stream and waits for the helper's `done`, at most `timeout` seconds; a helper that is
// still there then (stuck in a driver call, say), or that says more than the channel's limits
// allow, is killed.
void HelperChannel::stop(double timeout) {
  if (stepd_end_ < 0 || stopped_) return;
  stopped_ = true;
  ::shutdown(stepd_end_, SHUT_WR);
  // Without slurmstepd's copy of the helper's end, a helper that died shows as end of stream.
  if (helper_end_ >= 0) {
    ::close(helper_end_);
    helper_end_ = -1;
  }
  Heard h;
  const double deadline = monotonic() + timeout;
  Drained state = drain(stepd_end_, h, deadline);
  // Local task 0 says "helper PID" before its task_init returns: without it, none was started.
  if (!h.launched && state != Drained::Overflow) return;
  while (state == Drained::More) {
    const double left = deadline - monotonic();
    if (left <= 0) break;
    pollfd p = {stepd_end_, POLLIN, 0};
    (void)::poll(&p, 1, static_cast<int>(left * 1000) + 1);
    state = drain(stepd_end_, h, deadline);
  }
  if (state == Drained::Overflow) {
    const bool killed = kill_helper(h, job_uid_);
    // slurm_spank_log reaches the step's output: one line, whatever the helper wrote.
    slurm_spank_log("spank_ddp: warning: %s: %s wrote more than %zu bytes, or a line longer than "
                    "%zu, to its control channel, which carries a few short lines; %s. Something "
                    "in its environment (LD_PRELOAD?) writes to descriptor %d",
                    texts_.option, texts_.name, monitor::kMaxControlBytes,
                    monitor::kMaxControlLine, killed ? "it was killed" : "it had already ended",
                    monitor::kControlFd);
    return;
  }
  // Its `done` (or its end of the stream) is not its end: with a pidfd, wait for the process too,
  // which then no longer holds the task's output open.
  if (state == Drained::Done) {
    if (h.pidfd < 0) return;
    for (double left = deadline - monotonic(); left > 0 && !pidfd_ended(h.pidfd);
         left = deadline - monotonic()) {
      pollfd p = {h.pidfd, POLLIN, 0};
      (void)::poll(&p, 1, static_cast<int>(left * 1000) + 1);
    }
  }
  if (kill_helper(h, job_uid_))
    slurm_spank_log("spank_ddp: warning: %s: %s did not finish within %.0f s after the step's "
                    "tasks (stuck in a driver call, or something in its environment); it was "
                    "killed, and %s",
                    texts_.option, texts_.name, timeout, texts_.lost);
}

void HelperChannel::close() {
  for (int* fd : {&stepd_end_, &helper_end_})
    if (*fd >= 0) {
      ::close(*fd);
      *fd = -1;
    }
}

void HelperChannel::launch(spank_t sp, std::vector<std::string> argv,
                           const std::vector<std::string>& extra_env) {
  const std::string& program = argv.front();
  if (helper_end_ < 0) return refuse("slurmstepd made no control channel for " + std::string(texts_.name));
  if (::access(program.c_str(), X_OK) != 0)
    return refuse("cannot run " + program + ": " + std::strerror(errno) +
                  " (the site installs it with slurm-ddp; plugstack.conf " + texts_.setting +
                  " names another place)");
  auto args = c_strings(argv);
  // The job's environment as the program gets it: LD_LIBRARY_PATH finds libnvidia-ml.so.1 for
  // the sampler as for the program.
  char** job_env = nullptr;
  if (spank_get_item(sp, S_JOB_ENV, &job_env) != ESPANK_SUCCESS || !job_env)
    return refuse("cannot read the job's environment from Slurm");
  std::vector<std::string> extra = extra_env;
  std::vector<char*> env;
  for (char** e = job_env; *e; ++e) env.push_back(*e);
  for (auto& e : extra) env.push_back(e.data());
  env.push_back(nullptr);
  const plan::UserLimits limits = task_limits(job_env);
  const int control = helper_end_;
  const std::string exec_failed = std::string(kLogPrefix) + "warning: " + texts_.option +
                                  ": cannot start " + program + "; " + texts_.without + "\n";
  // The helper waits on this pipe until the launcher's line is on the channel, so that line is
  // the first one slurmstepd reads, before anything the user's environment may write there.
  int release[2];
  if (::pipe2(release, O_CLOEXEC) != 0) return refuse(std::string("pipe: ") + std::strerror(errno));

  const pid_t middle = ::fork();
  if (middle < 0) {
    ::close(release[0]);
    ::close(release[1]);
    return refuse(std::string("fork: ") + std::strerror(errno));
  }
  if (middle == 0) {
    // Only async-signal-safe calls from here on. The helper's parent exits at once, so the
    // helper is no child of the user's program (which might wait for every child it has).
    const pid_t helper = ::fork();
    if (helper != 0) {
      if (helper > 0) {
        char line[48] = "helper ";
        std::size_t n = 7 + decimal(line + 7, helper);
        line[n++] = '\n';
        // Opened while the helper is this process's unreaped child: its PID cannot be reused.
        send_helper_line(control, line, n, open_pidfd(helper));
      }
      ::_exit(helper > 0 ? 0 : 1);
    }
    ::close(release[1]);
    char go = 0;
    while (::read(release[0], &go, 1) < 0 && errno == EINTR) {
    }
    plan::apply_user_limits(limits);
    const int null = ::open("/dev/null", O_RDWR);
    if (null >= 0) {
      ::dup2(null, STDIN_FILENO);
      ::dup2(null, STDOUT_FILENO);
    }
    // fd 3 for the helper; dup2 onto itself would keep close-on-exec, so clear it then.
    if (control == monitor::kControlFd)
      ::fcntl(control, F_SETFD, 0);
    else
      ::dup2(control, monitor::kControlFd);
    ::execve(args[0], args.data(), env.data());
    (void)!::write(STDERR_FILENO, exec_failed.data(), exec_failed.size());
    send_all(monitor::kControlFd, monitor::kDoneMessage, std::strlen(monitor::kDoneMessage));
    ::_exit(127);
  }
  ::close(release[0]);
  ::close(release[1]);
  int status = 0;
  while (::waitpid(middle, &status, 0) < 0 && errno == EINTR) {
  }
}

}  // namespace ddp::spank
