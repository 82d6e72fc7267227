#include "control_reader.hpp"

#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "pidfd.hpp"

namespace ddp::monitor {
namespace {

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// One recvmsg. A descriptor is kept only from the first bytes on the channel; any other, and
// any beyond the first, is closed unread.
ssize_t receive(int fd, char* buf, std::size_t size, bool first, int& offered) {
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
      if (first && offered < 0)
        offered = passed;
      else
        close_fd(passed);
    }
  }
  return n;
}

}  // namespace

Heard::~Heard() {
  close_fd(pidfd);
  close_fd(offered_);
}

double monotonic_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

Drained drain(int fd, Heard& h, double deadline) {
  char buf[512];
  while (monotonic_seconds() < deadline) {
    const ssize_t n = receive(fd, buf, sizeof buf, h.first_, h.offered_);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return Drained::More;
    if (n <= 0) return Drained::Done;  // end of stream: the sampler has gone
    if (!h.lines.feed(buf, static_cast<std::size_t>(n))) return Drained::Overflow;
    while (const auto line = h.lines.next()) {
      const auto m = parse_control(*line);
      if (h.first_) {
        // The launcher's line, or nobody's: the descriptor stays only if it is that PID's pidfd.
        h.first_ = false;
        if (m && m->kind == ControlMessage::Kind::Sampler) {
          h.launched = true;
          h.sampler = m->pid;
          if (h.offered_ >= 0 && pidfd_pid(h.offered_) == m->pid) std::swap(h.pidfd, h.offered_);
        }
        close_fd(h.offered_);
        continue;
      }
      if (!m) continue;
      if (m->kind == ControlMessage::Kind::Hello) {
        h.hello = true;
        h.pid = m->pid;
        h.start_time = m->start_time;
      }
      if (m->kind == ControlMessage::Kind::Done) return Drained::Done;
    }
    if (h.lines.overflowed()) return Drained::Overflow;
  }
  return Drained::More;
}

bool send_line_with_fd(int socket, const char* text, std::size_t size, int fd) noexcept {
  iovec iov = {const_cast<char*>(text), size};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  if (fd >= 0) {
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &fd, sizeof(int));
  }
  ssize_t n;
  while ((n = ::sendmsg(socket, &msg, MSG_NOSIGNAL | MSG_DONTWAIT)) < 0 && errno == EINTR) {
  }
  return n == static_cast<ssize_t>(size);
}

}  // namespace ddp::monitor
