// ddp-monitor: the sampler of `--ddp-monitor`. The plugin starts it as the job's user from the
// step's local task 0 (spank/monitor_launch.cpp); it can also be run by hand on one process:
//   ddp-monitor --job 1 --node $(hostname) --interval 1 --task 0:PID [--gpu 0] [--net eth0]
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "helper_main.hpp"
#include "sampler.hpp"

namespace {

const char* const kUsage =
    "usage: ddp-monitor --job ID --node NAME [--step ID] [--interval SECONDS] [--dir PATTERN]\n"
    "                   [--node-index I] [--nodes N] [--tasks N] [--gpu INDEX[@BUSID]]...\n"
    "                   [--net IFACE]... [--ib HCA:PORT]... [--task RANK:PID]... [--control-fd FD] [--reply-fd FD]\n"
    "       ddp-monitor --help | --version\n"
    "Samples GPUs (NVML), the CPU use of tasks and the bytes through NICs every SECONDS into\n"
    "ddp-monitor-JOB.STEP-NODE.jsonl (in PATTERN, %u = user, %j = job id; default: here), and\n"
    "prints the summary on stderr at the end. Started by spank_ddp for --ddp-monitor; see\n"
    "ddp-report(1).\n";

}  // namespace

int main(int argc, char** argv) {
  return ddp::monitor::helper_main(argc, argv, "ddp-monitor", kUsage, [](const auto& args) {
    auto parsed = ddp::monitor::parse_sampler_args(args);
    parsed.reply_fd = ddp::monitor::adopt_control_fds(parsed.control_fd, parsed.reply_fd);
    // It shares the CPUs of rank 0: training comes first.
    (void)setpriority(PRIO_PROCESS, 0, 10);
    return ddp::monitor::run_sampler(parsed, {}, STDERR_FILENO);
  });
}
