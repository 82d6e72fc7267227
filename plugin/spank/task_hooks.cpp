// slurmstepd's hooks around the tasks, for the helper programs of a DDP step on this node (the
// --ddp-monitor sampler, the failure watch): each task as it is forked, each task as it is
// reaped, and the step's end.
#include <cstdint>
#include <string>

#include "control.hpp"
#include "monitor_launch.hpp"
#include "plugin_state.hpp"
#include "proc_stat.hpp"
#include "watch_launch.hpp"

namespace {

using ddp::spank::guarded;
using ddp::spank::state;

unsigned tasks_ended = 0;

}  // namespace

extern "C" int slurm_spank_task_post_fork(spank_t sp, int, char**) {
  if (spank_context() != S_CTX_REMOTE) return 0;
  return guarded("task_post_fork", [&] {
    if (!state().step) return 0;
    int local = -1;
    std::uint32_t global = 0;
    pid_t pid = 0;
    if (spank_get_item(sp, S_TASK_ID, &local) != ESPANK_SUCCESS ||
        spank_get_item(sp, S_TASK_GLOBAL_ID, &global) != ESPANK_SUCCESS ||
        spank_get_item(sp, S_TASK_PID, &pid) != ESPANK_SUCCESS || local < 0 || pid <= 0)
      return 0;
    // The task is slurmstepd's unreaped child: the start time read now names it for good.
    const auto stat = ddp::monitor::read_proc_stat("/proc", pid);
    const std::string line = ddp::monitor::task_message(static_cast<unsigned>(local), global, pid,
                                                        stat ? stat->start_time : 0);
    ddp::spank::monitor_task_forked(line);
    ddp::spank::watch_task_forked(line);
    return 0;
  });
}

extern "C" int slurm_spank_task_exit(spank_t sp, int, char**) {
  if (spank_context() != S_CTX_REMOTE) return 0;
  return guarded("task_exit", [&] {
    const auto& s = state();
    if (!s.step) return 0;
    int local = -1, status = 0;
    std::uint32_t global = 0;
    if (spank_get_item(sp, S_TASK_ID, &local) == ESPANK_SUCCESS &&
        spank_get_item(sp, S_TASK_GLOBAL_ID, &global) == ESPANK_SUCCESS &&
        spank_get_item(sp, S_TASK_EXIT_STATUS, &status) == ESPANK_SUCCESS && local >= 0)
      ddp::spank::watch_task_ended(static_cast<unsigned>(local), global, status);
    if (++tasks_ended >= s.step->facts.local_tasks) {
      // The watch first: it tells the other nodes before the sampler's summary is waited for.
      ddp::spank::watch_tasks_ended();
      ddp::spank::monitor_tasks_ended();
    }
    return 0;
  });
}

extern "C" int slurm_spank_exit(spank_t, int, char**) {
  if (spank_context() != S_CTX_REMOTE) return 0;
  return guarded("exit", [&] {
    ddp::spank::watch_exit();
    ddp::spank::monitor_exit();
    return 0;
  });
}
