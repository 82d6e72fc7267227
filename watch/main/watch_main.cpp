// ddp-watch: the failure watch of a DDP step, one per node. The plugin starts it as the job's
// user from the step's local task 0 (plugin/spank/watch_launch.cpp), with the node's end of a
// control channel to slurmstepd as fd 3 and the step's key in DDP_WATCH_KEY; see
// watch_node.hpp for what it does.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "end_signals.hpp"
#include "helper_main.hpp"
#include "watch_args.hpp"
#include "watch_node.hpp"

namespace {

const char* const kUsage =
    "usage: ddp-watch --job ID --step ID --node I --nodes N --host NAME --world RANKS\n"
    "                 --head MASTER_ADDR --ports LOW-HIGH [--timeout SECONDS]\n"
    "                 [--hung-timeout SECONDS] [--control-fd FD] [--reply-fd FD]\n"
    "       ddp-watch --help | --version\n"
    "The failure watch of one node of a DDP step, started by spank_ddp (see spank-ddp(8),\n"
    "--ddp-watch): ends the step when a rank fails, freezes, or its node is lost, and says once\n"
    "which rank failed first and why. The step's key comes in DDP_WATCH_KEY, the directory of\n"
    "the ranks' error files in DDP_WATCH_ERROR_DIR.\n";

}  // namespace

int main(int argc, char** argv) {
  return ddp::monitor::helper_main(argc, argv, "ddp-watch", kUsage, [](const auto& args) {
    auto parsed = ddp::watch::parse_watch_args(args);
    parsed.reply_fd = ddp::monitor::adopt_control_fds(parsed.control_fd, parsed.reply_fd);
    const char* key = std::getenv(ddp::watch::kKeyVariable);
    std::string secret = key ? key : "";
    (void)::unsetenv(ddp::watch::kKeyVariable);
    if (const char* dir = std::getenv(ddp::watch::kErrorDirVariable)) parsed.error_dir = dir;
    (void)::unsetenv(ddp::watch::kErrorDirVariable);
    // The child that asks Slurm to end the step is never waited for.
    (void)::signal(SIGCHLD, SIG_IGN);
    // The terminal's and Slurm's signals to the step do not end the watch (end_signals.hpp).
    ddp::watch::catch_end_signals();
    return ddp::watch::WatchNode(parsed, std::move(secret), STDERR_FILENO).run();
  });
}
