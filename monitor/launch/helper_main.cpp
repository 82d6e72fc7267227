#include "helper_main.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>

#include "version.hpp"

namespace ddp::monitor {

int adopt_control_fds(int control, int reply) {
  if (reply < 0) reply = control;
  std::vector<int> fds;
  if (DIR* d = opendir("/proc/self/fd")) {
    while (const dirent* e = readdir(d)) {
      const int fd = std::atoi(e->d_name);
      if (fd > 2 && fd != control && fd != reply && fd != dirfd(d)) fds.push_back(fd);
    }
    closedir(d);
  }
  for (int fd : fds) ::close(fd);
  if (control >= 0) {
    const int flags = ::fcntl(control, F_GETFL);
    if (flags >= 0) (void)::fcntl(control, F_SETFL, flags | O_NONBLOCK);
  }
  (void)::signal(SIGPIPE, SIG_IGN);
  return reply;
}

int helper_main(int argc, char** argv, const char* name, const char* usage,
                const std::function<int(const std::vector<std::string>&)>& run) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() == 1 && (args[0] == "--help" || args[0] == "-h")) {
    std::fputs(usage, stdout);
    return 0;
  }
  if (args.size() == 1 && args[0] == "--version") {
    std::printf("%s %s\n", name, ddp::plan::kVersion);
    return 0;
  }
  try {
    return run(args);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n%s", name, e.what(), usage);
    return 2;
  }
}

}  // namespace ddp::monitor
