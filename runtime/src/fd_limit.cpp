#include "fd_limit.hpp"

#include <sys/resource.h>

#include <cerrno>
#include <cstring>

#include "ddp/error.hpp"

namespace ddp::detail {

void ensure_open_files(std::uint64_t needed, const std::string& who) {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return;  // nothing known to improve on
  if (limit.rlim_cur == RLIM_INFINITY || limit.rlim_cur >= needed) return;
  if (limit.rlim_max != RLIM_INFINITY && limit.rlim_max < needed)
    throw Error(who + " needs about " + std::to_string(needed) +
                " open files, but the hard limit of open files is " + std::to_string(limit.rlim_max) +
                " (ulimit -Hn): raise it where the job starts (LimitNOFILE= in slurmd's systemd unit, "
                "or nofile in /etc/security/limits.conf, with PropagateResourceLimits in slurm.conf)");
  const rlim_t soft = limit.rlim_cur;
  limit.rlim_cur = limit.rlim_max;
  if (setrlimit(RLIMIT_NOFILE, &limit) != 0)
    throw Error(who + " needs about " + std::to_string(needed) + " open files; raising the limit from " +
                std::to_string(soft) + " failed: " + std::strerror(errno));
}

}  // namespace ddp::detail
