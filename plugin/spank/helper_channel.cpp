#include "helper_channel.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <utility>

#include "control.hpp"
#include "control_reader.hpp"
#include "helper_process.hpp"
#include "pidfd.hpp"
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

// Root signals no process but one of the job's own user.
bool of_user(long pid, uid_t job_uid) {
  const auto uids = process_uids(pid);
  return uids && uids->first == job_uid && uids->second == job_uid;
}

// SIGKILL to the helper: through its pidfd; without one (kernels before 5.3, or a launcher that
// could not pass it) only if the PID is still the very process that said hello.
bool kill_helper(const monitor::Heard& h, uid_t job_uid) {
  if (h.pidfd >= 0) {
    if (monitor::pidfd_ended(h.pidfd) || !of_user(h.sampler, job_uid)) return false;
    if (monitor::signal_pidfd(h.pidfd, SIGKILL)) return true;
    if (errno == ESRCH) return false;
  }
  if (!h.hello) return false;
  const auto now = monitor::read_proc_stat("/proc", h.pid);
  if (!now || now->start_time != h.start_time || now->state == 'Z' || !of_user(h.pid, job_uid))
    return false;
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
  if (stepd_end_ >= 0 && !stopped_) send_all(stepd_end_, line.data(), line.size());
}

void HelperChannel::refuse(const std::string& why) const {
  tell_user(std::string("warning: ") + texts_.option + ": " + why + "; " + texts_.without);
}

void HelperChannel::close() {
  for (int* fd : {&stepd_end_, &helper_end_})
    if (*fd >= 0) {
      ::close(*fd);
      *fd = -1;
    }
}

// Ends the stream and waits for the helper's `done`, at most `timeout` seconds; a helper that is
// still there then (stuck in a driver call, say), or that says more than the channel's limits
// allow, is killed. The channel is closed on every way out: what is left in it unread (a
// descriptor of the task's output, say) must not keep the step's output open.
void HelperChannel::stop(double timeout) {
  if (stepd_end_ < 0 || stopped_) return;
  stopped_ = true;
  ::shutdown(stepd_end_, SHUT_WR);
  // Without slurmstepd's copy of the helper's end, a helper that died shows as end of stream.
  if (helper_end_ >= 0) {
    ::close(helper_end_);
    helper_end_ = -1;
  }
  // Closed last, after any kill: closing first would end a stuck helper's write with SIGPIPE
  // and leave the warning to say that it had ended.
  struct CloseLast {
    HelperChannel& channel;
    ~CloseLast() { channel.close(); }
  } close_last{*this};
  monitor::Heard h;
  const double deadline = monitor::monotonic_seconds() + timeout;
  monitor::Drained state = monitor::drain(stepd_end_, h, deadline);
  while (state == monitor::Drained::More && h.launched) {
    const double left = deadline - monitor::monotonic_seconds();
    if (left <= 0) break;
    pollfd p = {stepd_end_, POLLIN, 0};
    (void)::poll(&p, 1, static_cast<int>(left * 1000) + 1);
    state = monitor::drain(stepd_end_, h, deadline);
  }
  // Its `done` (or its end of the stream) is not its end: with a pidfd, wait for the process too,
  // which then no longer holds the task's output open.
  if (state == monitor::Drained::Done && h.pidfd >= 0)
    for (double left = deadline - monitor::monotonic_seconds();
         left > 0 && !monitor::pidfd_ended(h.pidfd); left = deadline - monitor::monotonic_seconds()) {
      pollfd p = {h.pidfd, POLLIN, 0};
      (void)::poll(&p, 1, static_cast<int>(left * 1000) + 1);
    }
  // Local task 0 says "sampler PID" before its task_init returns: without it, none was started.
  if (!h.launched && state != monitor::Drained::Overflow) return;
  if (state == monitor::Drained::Done && h.pidfd < 0) return;
  const bool killed = kill_helper(h, job_uid_);
  // slurm_spank_log reaches the step's output (from task_exit; from exit only slurmd's log).
  if (state == monitor::Drained::Overflow)
    slurm_spank_log("spank_ddp: warning: %s: %s wrote more than %zu bytes, or a line longer than "
                    "%zu, to its control channel, which carries a few short lines; %s. Something "
                    "in its environment (LD_PRELOAD?) writes to descriptor %d",
                    texts_.option, texts_.name, monitor::kMaxControlBytes,
                    monitor::kMaxControlLine,
                    killed ? "it was killed"
                    : h.pidfd < 0 && !h.hello
                        ? "it could not be killed safely here (no pidfd), and ends with the step"
                        : "it had ended",
                    monitor::kControlFd);
  else if (killed)
    slurm_spank_log("spank_ddp: warning: %s: %s did not finish within %.0f s after the step's "
                    "tasks (stuck in a driver call, or something in its environment); it was "
                    "killed, and %s",
                    texts_.option, texts_.name, timeout, texts_.lost);
}

void HelperChannel::launch(spank_t sp, std::vector<std::string> argv,
                           const std::vector<std::string>& extra_env) {
  const std::string& program = argv.front();
  if (helper_end_ < 0)
    return refuse("slurmstepd made no control channel for " + std::string(texts_.name));
  if (::access(program.c_str(), X_OK) != 0)
    return refuse("cannot run " + program + ": " + std::strerror(errno) +
                  " (the site installs it with slurm-ddp; plugstack.conf " + texts_.setting +
                  " names another place)");
  auto args = c_strings(argv);
  // The job's environment as the program gets it (LD_LIBRARY_PATH finds libnvidia-ml.so.1 for
  // the sampler as for the program), and what is for the helper alone.
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
  // The helper waits on this pipe for the launcher's go, written once the launcher's line is on
  // the channel: that line is the first slurmstepd reads, before anything the user's
  // environment may write there.
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
      if (helper < 0) ::_exit(1);
      char line[48] = "sampler ";
      std::size_t n = 8 + decimal(line + 8, helper);
      line[n++] = '\n';
      // Opened while the helper is this process's unreaped child: its PID cannot be reused.
      const int pidfd = monitor::open_pidfd(helper);
      const bool sent = monitor::send_line_with_fd(control, line, n, pidfd) ||
                        (pidfd >= 0 && monitor::send_line_with_fd(control, line, n, -1));
      // The helper runs only once its line is out; otherwise it never runs at all.
      if (!sent || ::write(release[1], "g", 1) != 1) ::kill(helper, SIGKILL);
      ::_exit(0);
    }
    ::close(release[1]);
    char go = 0;
    ssize_t got;
    while ((got = ::read(release[0], &go, 1)) < 0 && errno == EINTR) {
    }
    if (got != 1) ::_exit(1);
    apply_user_limits(limits);
    const int null = ::open("/dev/null", O_RDWR);
    if (null >= 0) {
      ::dup2(null, STDIN_FILENO);
      ::dup2(null, STDOUT_FILENO);
      if (null > STDERR_FILENO) ::close(null);
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
