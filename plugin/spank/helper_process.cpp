#include "helper_process.hpp"

#include <dlfcn.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string_view>
#include <vector>

#include "spank_api.hpp"

// Older kernel headers lack the numbers; they are the same on every architecture.
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif

namespace ddp::spank {
namespace {

// slurm_rlimits_info.h, unchanged since Slurm 1.x: slurmstepd fills it from slurm.conf's
// PropagateResourceLimits[Except] and applies it to every task. It is in no public header, so it
// is looked up in the slurmstepd the plugin runs in.
struct SlurmRlimitsInfo {
  int resource;
  char* name;
  int propagate_flag;  // 1 propagate, 0 not, -1 not set
};
using GetRlimitsInfo = SlurmRlimitsInfo* (*)();

plan::Propagation slurm_propagation(std::string_view name) {
  static const auto get =
      reinterpret_cast<GetRlimitsInfo>(::dlsym(RTLD_DEFAULT, "get_slurm_rlimits_info"));
  if (!get) return plan::Propagation::Unknown;
  for (const SlurmRlimitsInfo* r = get(); r && r->name; ++r) {
    if (name != r->name) continue;
    if (r->propagate_flag == 1) return plan::Propagation::Yes;
    if (r->propagate_flag == 0) return plan::Propagation::No;
    return plan::Propagation::Unknown;
  }
  return plan::Propagation::Unknown;
}

}  // namespace

plan::UserLimits task_limits(char** job_env) {
  std::vector<std::string_view> env;
  for (char** e = job_env; e && *e; ++e) env.emplace_back(*e);
  return plan::user_limits(env, slurm_propagation);
}

int open_pidfd(pid_t pid) noexcept {
  return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
}

bool signal_pidfd(int pidfd, int sig) noexcept {
  return ::syscall(SYS_pidfd_send_signal, pidfd, sig, nullptr, 0) == 0;
}

bool pidfd_ended(int pidfd) noexcept {
  pollfd p = {pidfd, POLLIN, 0};
  return ::poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

}  // namespace ddp::spank
