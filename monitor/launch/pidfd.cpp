#include "pidfd.hpp"

#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>

// Older C library headers lack the numbers; these are x86-64's and aarch64's (and most others').
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif

namespace ddp::monitor {

int open_pidfd(pid_t pid) noexcept { return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)); }

bool signal_pidfd(int pidfd, int sig) noexcept {
  return ::syscall(SYS_pidfd_send_signal, pidfd, sig, nullptr, 0) == 0;
}

bool pidfd_ended(int pidfd) noexcept {
  pollfd p = {pidfd, POLLIN, 0};
  return ::poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

}  // namespace ddp::monitor
