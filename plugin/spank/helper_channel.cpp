#include "helper_channel.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
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

// Never blocks (the pipes are non-blocking): slurmstepd must not wait on a helper that does not
// read. Never raises SIGPIPE in slurmstepd either: it keeps the helper's read end open until
// stop(), after which nothing is written.
void write_all(int fd, const char* text, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, text, size);
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

// SIGKILL to the helper: through its pidfd; without one (kernels before 5.3, or a seccomp filter
// that refuses pidfd_open) only if the PID is still the very process that said who it is. That
// last check and kill() leave a window of microseconds in which the PID would have to be reaped
// and given out again: accepted there, as every PID-based tool does.
bool kill_helper(const monitor::Heard& h, uid_t job_uid) {
  if (!h.launched || !of_user(h.pid, job_uid)) return false;
  if (h.pidfd >= 0) {
    if (monitor::pidfd_ended(h.pidfd)) return false;
    if (monitor::signal_pidfd(h.pidfd, SIGKILL)) return true;
    if (errno == ESRCH) return false;
  }
  if (!monitor::same_process(h.pid, h.start_time)) return false;
  return ::kill(static_cast<pid_t>(h.pid), SIGKILL) == 0;
}

// Who the helper is, before it runs the program: "helper PID START\n". Allocates nothing.
std::size_t helper_line(char* out, long pid, std::uint64_t start) {
  std::size_t n = 0;
  for (const char* w = "helper "; *w;) out[n++] = *w++;
  n += decimal(out + n, pid);
  out[n++] = ' ';
  n += decimal(out + n, static_cast<long>(start));
  out[n++] = '\n';
  return n;
}

// `fd` moved to `target` without close-on-exec, whatever the two numbers are.
bool place_fd(int fd, int target) {
  return fd == target ? ::fcntl(fd, F_SETFD, 0) == 0 : ::dup2(fd, target) == target;
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
  int down[2], up[2], identity[2];
  if (::pipe2(down, O_CLOEXEC | O_NONBLOCK) != 0) {
    slurm_info("spank_ddp: no %s channel: pipe: %s", texts_.option, std::strerror(errno));
    return false;
  }
  if (::pipe2(up, O_CLOEXEC | O_NONBLOCK) != 0 ||
      ::pipe2(identity, O_CLOEXEC | O_NONBLOCK) != 0) {
    slurm_info("spank_ddp: no %s channel: pipe: %s", texts_.option, std::strerror(errno));
    for (int fd : {down[0], down[1], up[0], up[1]})
      if (fd >= 0) ::close(fd);
    return false;
  }
  owner_ = ::getpid();
  to_helper_ = down[1];
  helper_reads_ = down[0];
  from_helper_ = up[0];
  helper_writes_ = up[1];
  identity_ = identity[0];
  identity_writes_ = identity[1];
  return true;
}

void HelperChannel::send(const std::string& line) const {
  if (to_helper_ >= 0 && !stopped_) write_all(to_helper_, line.data(), line.size());
}

void HelperChannel::refuse(const std::string& why) const {
  tell_user(std::string("warning: ") + texts_.option + ": " + why + "; " + texts_.without);
}

// Under SlurmdParameters=contain_spank, Slurm runs some hooks (task_exit among them) in a clone
// that shares slurmstepd's memory but has a descriptor table of its own: a close there closes
// only the clone's copy, so the numbers are kept for slurmstepd's own close().
void HelperChannel::release(int& fd) {
  if (fd < 0) return;
  ::close(fd);
  if (::getpid() == owner_) fd = -1;
}

void HelperChannel::close() {
  if (::getpid() != owner_) return;
  for (int* fd : {&to_helper_, &helper_reads_, &from_helper_, &helper_writes_, &identity_,
                  &identity_writes_})
    release(*fd);
}

// Ends the stream and waits for the helper's `done`, at most `timeout` seconds; a helper that is
// still there then (stuck in a driver call, say), or that says more than the channel's limits
// allow, is killed. The channel is closed on every way out.
void HelperChannel::stop(double timeout) {
  if (to_helper_ < 0 || stopped_) return;
  stopped_ = true;
  // The end of the stream: said in it (a close in a contain_spank clone is not slurmstepd's),
  // then the ends closed. Without slurmstepd's copy of the helper's write end, a helper that
  // died shows as end of file.
  write_all(to_helper_, monitor::kEndMessage, std::strlen(monitor::kEndMessage));
  for (int* fd : {&to_helper_, &helper_reads_, &helper_writes_, &identity_writes_}) release(*fd);
  // Closed last, after any kill: closing first would end a stuck helper's write with SIGPIPE
  // and leave the warning to say that it had ended.
  struct CloseLast {
    HelperChannel& channel;
    ~CloseLast() {
      for (int* fd : {&channel.from_helper_, &channel.identity_}) channel.release(*fd);
    }
  } close_last{*this};
  monitor::Heard h;
  monitor::take_identity(identity_, h);
  const double deadline = monitor::monotonic_seconds() + timeout;
  monitor::Drained state = monitor::drain(from_helper_, h, deadline);
  while (state == monitor::Drained::More && h.launched) {
    const double left = deadline - monitor::monotonic_seconds();
    if (left <= 0) break;
    pollfd p = {from_helper_, POLLIN, 0};
    (void)::poll(&p, 1, static_cast<int>(left * 1000) + 1);
    state = monitor::drain(from_helper_, h, deadline);
  }
  // Its `done` (or its end of the stream) is not its end: with a pidfd, wait for the process too,
  // which then no longer holds the task's output open.
  if (state == monitor::Drained::Done && h.pidfd >= 0)
    for (double left = deadline - monitor::monotonic_seconds();
         left > 0 && !monitor::pidfd_ended(h.pidfd); left = deadline - monitor::monotonic_seconds()) {
      pollfd p = {h.pidfd, POLLIN, 0};
      (void)::poll(&p, 1, static_cast<int>(left * 1000) + 1);
    }
  // The helper's process says who it is before it runs the program: without that, none ran.
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
                    : !h.launched
                        ? "it could not be killed safely here, and ends with the step"
                        : "it had ended",
                    monitor::kReplyFd);
  else if (killed)
    slurm_spank_log("spank_ddp: warning: %s: %s did not finish within %.0f s after the step's "
                    "tasks (stuck in a driver call, or something in its environment); it was "
                    "killed, and %s",
                    texts_.option, texts_.name, timeout, texts_.lost);
}

void HelperChannel::launch(spank_t sp, std::vector<std::string> argv,
                           const std::vector<std::string>& extra_env) {
  const std::string& program = argv.front();
  if (helper_reads_ < 0 || helper_writes_ < 0 || identity_writes_ < 0)
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
  const int reads = helper_reads_, writes = helper_writes_, identity = identity_writes_;
  const std::string exec_failed = std::string(kLogPrefix) + "warning: " + texts_.option +
                                  ": cannot start " + program + "; " + texts_.without + "\n";

  const pid_t middle = ::fork();
  if (middle < 0) return refuse(std::string("fork: ") + std::strerror(errno));
  if (middle == 0) {
    // Only async-signal-safe calls from here on. The helper's parent exits at once, so the
    // helper is no child of the user's program (which might wait for every child it has).
    const pid_t helper = ::fork();
    if (helper != 0) ::_exit(helper < 0 ? 1 : 0);
    const auto fail = [&] {
      (void)!::write(STDERR_FILENO, exec_failed.data(), exec_failed.size());
      ::_exit(1);
    };
    // Who the helper is, on a pipe of its own that closes at exec: nothing the helper runs can
    // reach it (not even through /proc/PID/fd), so this is the plugin's word alone.
    char line[64];
    const std::uint64_t start = monitor::own_start_time();
    if (start == 0) fail();
    const std::size_t n = helper_line(line, ::getpid(), start);
    if (::write(identity, line, n) != static_cast<ssize_t>(n)) fail();
    // Out of the way of fds 0-4 first, whatever numbers the ends have now.
    const int in = ::fcntl(reads, F_DUPFD_CLOEXEC, 10);
    const int out = ::fcntl(writes, F_DUPFD_CLOEXEC, 10);
    if (in < 0 || out < 0) fail();
    const int null = ::open("/dev/null", O_RDWR);
    if (null >= 0) {
      ::dup2(null, STDIN_FILENO);
      ::dup2(null, STDOUT_FILENO);
      if (null > STDERR_FILENO) ::close(null);
    }
    if (!place_fd(in, monitor::kControlFd) || !place_fd(out, monitor::kReplyFd)) fail();
    apply_user_limits(limits);
    ::execve(args[0], args.data(), env.data());
    (void)!::write(STDERR_FILENO, exec_failed.data(), exec_failed.size());
    write_all(monitor::kReplyFd, monitor::kDoneMessage, std::strlen(monitor::kDoneMessage));
    ::_exit(127);
  }
  int status = 0;
  while (::waitpid(middle, &status, 0) < 0 && errno == EINTR) {
  }
}

}  // namespace ddp::spank
