#include "frozen.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "proc_stat.hpp"

namespace ddp::watch {
namespace {

// rchar + wchar from /proc/PID/io (read only for a task in state D); 0 when it cannot be read.
std::uint64_t io_bytes(const std::string& proc_root, long pid) {
  const std::string path = proc_root + "/" + std::to_string(pid) + "/io";
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buf[1024];
  ssize_t n;
  do n = ::read(fd, buf, sizeof buf - 1);
  while (n < 0 && errno == EINTR);
  ::close(fd);
  if (n <= 0) return 0;
  buf[n] = '\0';
  std::uint64_t total = 0;
  for (const char* key : {"rchar: ", "wchar: "})
    if (const char* at = std::strstr(buf, key)) total += std::strtoull(at + std::strlen(key), nullptr, 10);
  return total;
}

}  // namespace

std::optional<How> FrozenClock::update(const TaskSample& s, Clock::time_point now, Ms timeout) {
  const bool frozen_state = s.state == 'T' || s.state == 'D';
  // A new state, or progress while in D, starts the clock again.
  if (!running_ || s.state != state_ || (s.state == 'D' && (s.ticks != ticks_ || s.io_bytes != io_))) {
    running_ = true;
    state_ = s.state;
    ticks_ = s.ticks;
    io_ = s.io_bytes;
    since_ = now;
    return std::nullopt;
  }
  if (!frozen_state || now - since_ < timeout) return std::nullopt;
  return s.state == 'T' ? How::Stopped : How::Hung;
}

unsigned FrozenClock::seconds(Clock::time_point now) const {
  return static_cast<unsigned>(std::chrono::duration_cast<std::chrono::seconds>(now - since_).count());
}

std::optional<TaskSample> sample_task(const std::string& proc_root, long pid) {
  const auto stat = monitor::read_proc_stat(proc_root, pid);
  if (!stat || stat->state == 'Z' || stat->state == 'X') return std::nullopt;
  TaskSample s;
  s.state = stat->state;
  s.ticks = stat->ticks;
  if (s.state == 'D') s.io_bytes = io_bytes(proc_root, pid);
  return s;
}

}  // namespace ddp::watch
