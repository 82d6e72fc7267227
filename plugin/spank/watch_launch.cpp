#include "watch_launch.hpp"

#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "control.hpp"
#include "helper_channel.hpp"
#include "plugin_state.hpp"

namespace ddp::spank {
namespace {

HelperChannel& channel() {
  static HelperChannel c({"--ddp-watch", "the failure watch",
                          "a failure on this node ends the step only as Slurm would",
                          "the other nodes may not have heard that this node ended",
                          "watch=PATH"});
  return c;
}

std::int64_t wall_ns() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

bool watched() {
  const auto& s = state();
  return s.step && s.step->watch;
}

}  // namespace

void open_watch_channel(spank_t sp) {
  const auto& s = state();
  if (s.options.watch && !s.options.watch->on) return;
  (void)channel().open(sp);
}

std::optional<std::string> prepare_error_dir(const plan::WatchPlan& watch) {
  const std::string& dir = watch.error_dir;
  if (dir.empty()) return std::string("no directory for error files (this srun lacks the plugin)");
  // Every task of the node tries; the first makes it. Its name is unguessable, yet whatever is
  // there must be this user's private directory, or nobody's error file goes in it.
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return dir + ": " + std::strerror(errno);
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) return dir + ": " + std::strerror(errno);
  if (!S_ISDIR(st.st_mode) || st.st_uid != ::geteuid() || (st.st_mode & 077) != 0)
    return dir + " is not a private directory of this user";
  return std::nullopt;
}

void start_watch(spank_t sp, const plan::StepPlan& step, const std::string& key) {
  if (!step.watch) return;
  try {
    std::vector<std::string> argv = {plan::watch_program(state().config)};
    for (auto& a : watch::to_argv(plan::watch_args(step, *step.watch))) argv.push_back(std::move(a));
    std::vector<std::string> env;
    if (!key.empty()) env.push_back(std::string(watch::kKeyVariable) + "=" + key);
    channel().launch(sp, std::move(argv), env);
  } catch (const std::exception& e) {
    channel().refuse(e.what());
  }
}

void watch_task_forked(const std::string& task_line) {
  if (watched()) channel().send(task_line);
}

void watch_task_ended(unsigned local, unsigned global, int status) {
  if (watched()) channel().send(monitor::exit_message(local, global, status, wall_ns()));
}

void watch_tasks_ended() { channel().stop(3.0); }

void watch_exit() {
  channel().stop(1.0);
  channel().close();
}

}  // namespace ddp::spank
