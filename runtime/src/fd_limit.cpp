#include "fd_limit.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "ddp/error.hpp"

namespace ddp::detail {

std::optional<std::string> ensure_open_files(std::uint64_t needed, std::uint64_t wanted,
                                             const std::string& who) {
  wanted = std::max(needed, wanted);
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return std::nullopt;  // nothing known to improve on
  if (limit.rlim_cur == RLIM_INFINITY || limit.rlim_cur >= wanted) return std::nullopt;
  const std::string fix =
      " (ulimit -Hn): raise it where the job starts (LimitNOFILE= in slurmd's systemd unit, or nofile in "
      "/etc/security/limits.conf, with PropagateResourceLimits in slurm.conf)";
  if (limit.rlim_max != RLIM_INFINITY && limit.rlim_max < needed)
    throw Error(who + " needs at least " + std::to_string(needed) +
                " open files, but the hard limit of open files is " + std::to_string(limit.rlim_max) + fix);
  const rlim_t soft = limit.rlim_cur;
  limit.rlim_cur = limit.rlim_max == RLIM_INFINITY ? wanted : limit.rlim_max;
  if (setrlimit(RLIMIT_NOFILE, &limit) != 0)
    throw Error(who + " needs about " + std::to_string(needed) + " open files; raising the limit from " +
                std::to_string(soft) + " failed: " + std::strerror(errno));
  if (limit.rlim_cur >= wanted) return std::nullopt;
  return who + " may need up to " + std::to_string(wanted) +
         " open files (a node whose LOCAL_RANK 0 does not relay its ranks' requests has each of them "
         "connect itself), and the hard limit of open files is " + std::to_string(limit.rlim_max) + fix;
}

}  // namespace ddp::detail
