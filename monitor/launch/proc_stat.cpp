#include "proc_stat.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <sstream>

namespace ddp::monitor {
namespace {

std::optional<std::string> read_small_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string text;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buf, static_cast<std::size_t>(n));
    if (text.size() > (1 << 16)) break;
  }
  ::close(fd);
  return text;
}

}  // namespace

std::optional<ProcStat> parse_proc_stat(std::string_view text) {
  // "PID (COMM) S PPID ..." where COMM may hold anything, ')' included: cut at the last ')'.
  const auto open = text.find(" (");
  const auto close = text.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open)
    return std::nullopt;
  ProcStat s;
  try {
    s.pid = std::stol(std::string(text.substr(0, open)));
  } catch (const std::exception&) {
    return std::nullopt;
  }
  std::istringstream in{std::string(text.substr(close + 1))};
  // Fields 3.. of proc(5): state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt
  // cmajflt utime stime cutime cstime priority nice num_threads itrealvalue starttime
  std::string state;
  long ppid = 0;
  std::uint64_t utime = 0, stime = 0, start = 0;
  long long cutime = 0, cstime = 0, iskip = 0;
  if (!(in >> state >> ppid)) return std::nullopt;
  for (int i = 0; i < 9; ++i)
    if (!(in >> iskip)) return std::nullopt;
  if (!(in >> utime >> stime >> cutime >> cstime)) return std::nullopt;
  for (int i = 0; i < 4; ++i)
    if (!(in >> iskip)) return std::nullopt;
  if (!(in >> start)) return std::nullopt;
  s.state = state.empty() ? '?' : state[0];
  s.ppid = ppid;
  s.ticks = utime + stime + static_cast<std::uint64_t>(cutime < 0 ? 0 : cutime) +
            static_cast<std::uint64_t>(cstime < 0 ? 0 : cstime);
  s.start_time = start;
  return s;
}

std::uint64_t own_start_time() noexcept {
  const int fd = ::open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buf[1024];
  std::size_t size = 0;
  ssize_t n;
  while (size < sizeof buf &&
         ((n = ::read(fd, buf + size, sizeof buf - size)) > 0 || (n < 0 && errno == EINTR)))
    if (n > 0) size += static_cast<std::size_t>(n);
  ::close(fd);
  // After the last ')' (the command name may hold anything) come fields 3..; the 22nd is wanted.
  std::size_t i = size;
  while (i > 0 && buf[i - 1] != ')') --i;
  if (i == 0) return 0;
  for (int field = 2; field < 22 && i < size; ++i)
    if (buf[i] == ' ') ++field;
  std::uint64_t start = 0;
  for (; i < size && buf[i] >= '0' && buf[i] <= '9'; ++i)
    start = start * 10 + static_cast<std::uint64_t>(buf[i] - '0');
  return start;
}

std::optional<ProcStat> read_proc_stat(const std::string& proc_root, long pid) {
  const auto text = read_small_file(proc_root + "/" + std::to_string(pid) + "/stat");
  if (!text) return std::nullopt;
  return parse_proc_stat(*text);
}

}  // namespace ddp::monitor
