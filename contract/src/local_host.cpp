#include "local_host.hpp"

#include <unistd.h>

#include <climits>

namespace ddp::plan {

std::optional<std::string> local_host_name() {
  // gethostname may leave a truncated name unterminated; the last byte stays NUL.
  char buf[HOST_NAME_MAX + 1] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0 || buf[0] == '\0') return std::nullopt;
  return std::string(buf);
}

}  // namespace ddp::plan
