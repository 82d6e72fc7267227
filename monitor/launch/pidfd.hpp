// Processes by pidfd (Linux 5.3 and later): a signal through one reaches the very process it was
// opened for, never one that got its PID after it was reaped. Async-signal-safe, for forked
// children too. Each returns -1 or false (errno ENOSYS) on older kernels, where callers fall back
// on what they checked themselves.
#pragma once

#include <sys/types.h>

namespace ddp::monitor {

int open_pidfd(pid_t pid) noexcept;
bool signal_pidfd(int pidfd, int sig) noexcept;
// Whether the process has ended (its pidfd reads ready); false while it runs or when unknown.
bool pidfd_ended(int pidfd) noexcept;

}  // namespace ddp::monitor
