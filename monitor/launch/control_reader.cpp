#include "control_reader.hpp"

#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <string_view>

#include "pidfd.hpp"
#include "proc_stat.hpp"

namespace ddp::monitor {

Heard::~Heard() {
  if (pidfd >= 0) ::close(pidfd);
}

double monotonic_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

bool same_process(long pid, std::uint64_t start_time) {
  const auto now = read_proc_stat("/proc", pid);
  return now && now->start_time == start_time && now->state != 'Z' && now->state != 'X';
}

void take_identity(int fd, Heard& h) {
  char buf[128];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf - 1)) < 0 && errno == EINTR) {
  }
  if (n <= 0) return;
  std::string_view text(buf, static_cast<std::size_t>(n));
  if (text.back() != '\n') return;
  const auto m = parse_control(text.substr(0, text.size() - 1));
  if (!m || m->kind != ControlMessage::Kind::Helper) return;
  h.launched = true;
  h.pid = m->pid;
  h.start_time = m->start_time;
  // Checked after the open: a pidfd of a process that took the PID later fails it.
  h.pidfd = open_pidfd(static_cast<pid_t>(m->pid));
  if (h.pidfd >= 0 && !same_process(m->pid, m->start_time)) {
    ::close(h.pidfd);
    h.pidfd = -1;
  }
}

Drained drain(int fd, Heard& h, double deadline) {
  char buf[512];
  while (monotonic_seconds() < deadline) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return Drained::More;
    if (n <= 0) return Drained::Done;  // end of file: the helper has gone
    if (!h.lines.feed(buf, static_cast<std::size_t>(n))) return Drained::Overflow;
    while (const auto line = h.lines.next()) {
      const auto m = parse_control(*line);
      if (m && m->kind == ControlMessage::Kind::Done) return Drained::Done;
    }
    if (h.lines.overflowed()) return Drained::Overflow;
  }
  return Drained::More;
}

}  // namespace ddp::monitor
