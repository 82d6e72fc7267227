#include "monitor_launch.hpp"

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
#include <string>
#include <utility>
#include <vector>

#include "control.hpp"
#include "control_reader.hpp"
#include "helper_process.hpp"
#include "pidfd.hpp"
#include "plugin_state.hpp"
#include "proc_stat.hpp"
#include "step_facts_reader.hpp"

namespace ddp::spank {
namespace {

// The channel of this step; slurmstepd and the tasks it forks share it (the tasks' copies close
// when they exec).
struct Channel {
  int stepd_end = -1;
  int sampler_end = -1;
  uid_t job_uid = 0;
  unsigned exited = 0;  // tasks seen by task_exit
  bool stopped = false;
};

Channel& channel() {
  static Channel c;
  return c;
}

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

// Never blocks: slurmstepd must not wait on a sampler that does not read.
void send_line(int fd, const char* text, std::size_t size) {
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

// SIGKILL to the sampler: through its pidfd; without one (kernels before 5.3, or a launcher that
// could not pass it) only if the PID is still the very process that said hello.
bool kill_sampler(const monitor::Heard& h, uid_t job_uid) {
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

void close_channel() {
  Channel& c = channel();
  for (int* fd : {&c.stepd_end, &c.sampler_end})
    if (*fd >= 0) {
      ::close(*fd);
      *fd = -1;
    }
}

// Ends the stream and waits for the sampler's `done`, at most `timeout` seconds; a sampler that
// is still there then (stuck in a driver call, say), or that says more than the channel's limits
// allow, is killed. The channel is closed on every way out: what is left in it unread (a
// descriptor of the task's output, say) must not keep the step's output open.
void stop(double timeout) {
  Channel& c = channel();
  if (c.stepd_end < 0 || c.stopped) return;
  c.stopped = true;
  ::shutdown(c.stepd_end, SHUT_WR);
  // Without slurmstepd's copy of the sampler's end, a sampler that died shows as end of stream.
  if (c.sampler_end >= 0) {
    ::close(c.sampler_end);
    c.sampler_end = -1;
  }
  // Closed last, after any kill: closing first would end a stuck sampler's write with SIGPIPE
  // and leave the warning to say that it had ended.
  struct CloseLast {
    ~CloseLast() { close_channel(); }
  } close_last;
  monitor::Heard h;
  const double deadline = monitor::monotonic_seconds() + timeout;
  monitor::Drained state = monitor::drain(c.stepd_end, h, deadline);
  while (state == monitor::Drained::More && h.launched) {
    const double left = deadline - monitor::monotonic_seconds();
    if (left <= 0) break;
    pollfd p = {c.stepd_end, POLLIN, 0};
    (void)::poll(&p, 1, static_cast<int>(left * 1000) + 1);
    state = monitor::drain(c.stepd_end, h, deadline);
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
  const bool killed = kill_sampler(h, c.job_uid);
  // slurm_spank_log reaches the step's output (from task_exit; from exit only slurmd's log).
  if (state == monitor::Drained::Overflow)
    slurm_spank_log("spank_ddp: warning: --ddp-monitor: the sampler wrote more than %zu bytes, or "
                    "a line longer than %zu, to its control channel, which carries a few short "
                    "lines; %s. Something in its environment (LD_PRELOAD?) writes to descriptor %d",
                    monitor::kMaxControlBytes, monitor::kMaxControlLine,
                    killed ? "it was killed"
                    : h.pidfd < 0 && !h.hello
                        ? "it could not be killed safely here (no pidfd), and ends with the step"
                        : "it had ended",
                    monitor::kControlFd);
  else if (killed)
    slurm_spank_log("spank_ddp: warning: --ddp-monitor: the sampler did not finish within %.0f s "
                    "after the step's tasks (stuck in a driver call, or something in its "
                    "environment); it was killed, and this node's summary is missing",
                    timeout);
}

std::vector<char*> c_strings(std::vector<std::string>& v) {
  std::vector<char*> out;
  for (auto& s : v) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

}  // namespace

namespace {

void refuse(const std::string& why) {
  tell_user("warning: --ddp-monitor: " + why + "; this step runs unmonitored");
}

void launch(spank_t sp, const plan::StepPlan& step, const plan::GpuFacts& gpus,
            const plan::NodePlacement& placement) {
  const Channel& c = channel();
  const std::string program = plan::monitor_program(state().config);
  if (c.sampler_end < 0) return refuse("slurmstepd made no control channel for the sampler");
  if (::access(program.c_str(), X_OK) != 0)
    return refuse("cannot run " + program + ": " + std::strerror(errno) +
                  " (the site installs it with slurm-ddp; plugstack.conf monitor=PATH names "
                  "another place)");
  std::vector<std::string> argv = {program};
  for (auto& a : monitor::to_argv(plan::sampler_args(step, *step.monitor, gpus, placement)))
    argv.push_back(std::move(a));
  auto args = c_strings(argv);
  // The job's environment as the program gets it: LD_LIBRARY_PATH finds libnvidia-ml.so.1 for
  // the sampler as for the program.
  char** env = nullptr;
  if (spank_get_item(sp, S_JOB_ENV, &env) != ESPANK_SUCCESS || !env)
    return refuse("cannot read the job's environment from Slurm");
  const plan::UserLimits limits = task_limits(env);
  const int control = c.sampler_end;
  const std::string exec_failed =
      std::string(kLogPrefix) + "warning: --ddp-monitor: cannot start " + program +
      "; this step runs unmonitored\n";
  // The sampler waits on this pipe for the launcher's go, written once the launcher's line is on
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
    // Only async-signal-safe calls from here on. The sampler's parent exits at once, so the
    // sampler is no child of the user's program (which might wait for every child it has).
    const pid_t sampler = ::fork();
    if (sampler != 0) {
      if (sampler < 0) ::_exit(1);
      char line[48] = "sampler ";
      std::size_t n = 8 + decimal(line + 8, sampler);
      line[n++] = '\n';
      // Opened while the sampler is this process's unreaped child: its PID cannot be reused.
      const int pidfd = monitor::open_pidfd(sampler);
      const bool sent = monitor::send_line_with_fd(control, line, n, pidfd) ||
                        (pidfd >= 0 && monitor::send_line_with_fd(control, line, n, -1));
      // The sampler runs only once its line is out; otherwise it never runs at all.
      if (!sent || ::write(release[1], "g", 1) != 1) ::kill(sampler, SIGKILL);
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
    // fd 3 for the sampler; dup2 onto itself would keep close-on-exec, so clear it then.
    if (control == monitor::kControlFd)
      ::fcntl(control, F_SETFD, 0);
    else
      ::dup2(control, monitor::kControlFd);
    ::execve(args[0], args.data(), env);
    (void)!::write(STDERR_FILENO, exec_failed.data(), exec_failed.size());
    send_line(monitor::kControlFd, monitor::kDoneMessage, std::strlen(monitor::kDoneMessage));
    ::_exit(127);
  }
  ::close(release[0]);
  ::close(release[1]);
  int status = 0;
  while (::waitpid(middle, &status, 0) < 0 && errno == EINTR) {
  }
}

}  // namespace

void start_monitor(spank_t sp, const plan::StepPlan& step, const plan::GpuFacts& gpus,
                   const plan::NodePlacement& placement) {
  if (!step.monitor) return;
  try {
    launch(sp, step, gpus, placement);
  } catch (const std::exception& e) {
    refuse(e.what());
  }
}

}  // namespace ddp::spank

using ddp::spank::channel;
using ddp::spank::guarded;
using ddp::spank::state;

namespace ddp::spank {

void open_monitor_channel(spank_t sp) {
  const auto& s = state();
  if (s.options.monitor && !s.options.monitor->on) return;
  uid_t uid = 0;
  if (spank_get_item(sp, S_JOB_UID, &uid) != ESPANK_SUCCESS) return;
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
    slurm_info("spank_ddp: no --ddp-monitor channel: socketpair: %s", std::strerror(errno));
    return;
  }
  channel().stepd_end = fds[0];
  channel().sampler_end = fds[1];
  channel().job_uid = uid;
}

}  // namespace ddp::spank

extern "C" int slurm_spank_task_post_fork(spank_t sp, int, char**) {
  if (spank_context() != S_CTX_REMOTE) return 0;
  return guarded("task_post_fork", [&] {
    const auto& s = state();
    if (channel().stepd_end < 0 || !s.step || !s.step->monitor) return 0;
    int local = -1;
    std::uint32_t global = 0;
    pid_t pid = 0;
    if (spank_get_item(sp, S_TASK_ID, &local) != ESPANK_SUCCESS ||
        spank_get_item(sp, S_TASK_GLOBAL_ID, &global) != ESPANK_SUCCESS ||
        spank_get_item(sp, S_TASK_PID, &pid) != ESPANK_SUCCESS || local < 0 || pid <= 0)
      return 0;
    const std::string line = ddp::monitor::task_message(static_cast<unsigned>(local), global, pid);
    ddp::spank::send_line(channel().stepd_end, line.data(), line.size());
    return 0;
  });
}

extern "C" int slurm_spank_task_exit(spank_t, int, char**) {
  if (spank_context() != S_CTX_REMOTE) return 0;
  return guarded("task_exit", [&] {
    const auto& s = state();
    if (channel().stepd_end < 0 || !s.step) return 0;
    if (++channel().exited >= s.step->facts.local_tasks) ddp::spank::stop(3.0);
    return 0;
  });
}

extern "C" int slurm_spank_exit(spank_t, int, char**) {
  if (spank_context() != S_CTX_REMOTE) return 0;
  return guarded("exit", [&] {
    ddp::spank::stop(1.0);
    ddp::spank::close_channel();
    return 0;
  });
}
