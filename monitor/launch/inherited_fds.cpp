#include "inherited_fds.hpp"

#include <dirent.h>
#include <unistd.h>

#include <cstdlib>
#include <vector>

namespace ddp::monitor {

void close_inherited_fds(int keep) {
  std::vector<int> fds;
  if (DIR* d = opendir("/proc/self/fd")) {
    while (const dirent* e = readdir(d)) {
      const int fd = std::atoi(e->d_name);
      if (fd > 2 && fd != keep && fd != dirfd(d)) fds.push_back(fd);
    }
    closedir(d);
  }
  for (int fd : fds) ::close(fd);
}

}  // namespace ddp::monitor
