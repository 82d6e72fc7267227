#include "local_tasks.hpp"

#include <signal.h>
#include <unistd.h>

#include "pidfd.hpp"
#include "proc_stat.hpp"

namespace ddp::watch {
namespace {

bool same_process(const std::string& proc, long pid, std::uint64_t start_time) {
  const auto now = monitor::read_proc_stat(proc, pid);
  return now && now->start_time == start_time && now->state != 'Z';
}

}  // namespace

LocalTasks::~LocalTasks() {
  for (LocalTask& t : tasks_)
    if (t.pidfd >= 0) ::close(t.pidfd);
}

void LocalTasks::forked(const monitor::ControlMessage& line) {
  for (const LocalTask& t : tasks_)
    if (t.local == static_cast<unsigned>(line.local)) return;
  LocalTask t;
  t.local = static_cast<unsigned>(line.local);
  t.global = static_cast<unsigned>(line.global);
  t.pid = line.pid;
  t.start_time = line.start_time;
  // Opened, then checked: if the pid still names the task now, the pidfd names it for good.
  t.pidfd = monitor::open_pidfd(static_cast<pid_t>(t.pid));
  if (t.pidfd >= 0 && !same_process(proc_, t.pid, t.start_time)) {
    ::close(t.pidfd);
    t.pidfd = -1;
    t.ended = true;  // gone before the watch saw it; its exit line follows
  }
  tasks_.push_back(std::move(t));
}

const LocalTask* LocalTasks::ended(const monitor::ControlMessage& line) {
  for (LocalTask& t : tasks_)
    if (t.local == static_cast<unsigned>(line.local)) {
      t.ended = true;
      t.status = line.status;
      if (t.pidfd >= 0) {
        ::close(t.pidfd);
        t.pidfd = -1;
      }
      return &t;
    }
  return nullptr;
}

std::vector<FrozenTask> LocalTasks::frozen(Clock::time_point now, Ms timeout, Ms hung_timeout) {
  std::vector<FrozenTask> out;
  for (LocalTask& t : tasks_) {
    if (t.ended || t.frozen_said) continue;
    const auto sample = sample_task(proc_, t.pid);
    if (!sample) continue;
    if (const auto how = t.clock.update(*sample, now, timeout, hung_timeout)) {
      t.frozen_said = true;
      out.push_back({t.global, *how, t.clock.seconds(now)});
    }
  }
  return out;
}

void LocalTasks::discount(Ms gap) {
  for (LocalTask& t : tasks_) t.clock.discount(gap);
}

bool LocalTasks::stopped(unsigned global) const {
  for (const LocalTask& t : tasks_)
    if (t.global == global && !t.ended) {
      const auto sample = sample_task(proc_, t.pid);
      return sample && sample->state == 'T';
    }
  return false;
}

void LocalTasks::judge_again(unsigned global) {
  for (LocalTask& t : tasks_)
    if (t.global == global) {
      t.clock = FrozenClock();
      t.frozen_said = false;
    }
}

bool LocalTasks::send(LocalTask& t, int sig) {
  if (t.pidfd >= 0) return monitor::signal_pidfd(t.pidfd, sig);
  // Kernels without pidfds (before 5.3): the pid, if it still names the task.
  if (!same_process(proc_, t.pid, t.start_time)) return false;
  return ::kill(static_cast<pid_t>(t.pid), sig) == 0;
}

void LocalTasks::signal_running(int sig) {
  for (LocalTask& t : tasks_) {
    if (t.ended) continue;
    const auto stat = monitor::read_proc_stat(proc_, t.pid);
    send(t, stat && stat->state == 'T' ? SIGKILL : sig);
  }
}

void LocalTasks::pidfds(std::vector<int>& out) const {
  for (const LocalTask& t : tasks_)
    if (!t.ended && t.pidfd >= 0 && t.gone_ns == 0) out.push_back(t.pidfd);
}

void LocalTasks::died(int pidfd, std::int64_t wall_ns) {
  for (LocalTask& t : tasks_)
    if (t.pidfd == pidfd && t.gone_ns == 0) t.gone_ns = wall_ns;
}

bool LocalTasks::any_running() const {
  for (const LocalTask& t : tasks_)
    if (!t.ended) return true;
  return false;
}

std::vector<unsigned> LocalTasks::ranks() const {
  std::vector<unsigned> r;
  for (const LocalTask& t : tasks_) r.push_back(t.global);
  return r;
}

}  // namespace ddp::watch
