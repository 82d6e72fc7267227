#include "monitor_launch.hpp"

#include "control.hpp"
#include "helper_channel.hpp"
#include "plugin_state.hpp"

namespace ddp::spank {
namespace {

HelperChannel& channel() {
  static HelperChannel c({"--ddp-monitor", "the sampler", "this step runs unmonitored",
                          "this node's summary is missing", "monitor=PATH"});
  return c;
}

}  // namespace

void open_monitor_channel(spank_t sp) {
  const auto& s = state();
  if (s.options.monitor && !s.options.monitor->on) return;
  (void)channel().open(sp);
}

void start_monitor(spank_t sp, const plan::StepPlan& step, const plan::GpuFacts& gpus,
                   const plan::NodePlacement& placement) {
  if (!step.monitor) return;
  try {
    std::vector<std::string> argv = {plan::monitor_program(state().config)};
    for (auto& a : monitor::to_argv(plan::sampler_args(step, *step.monitor, gpus, placement)))
      argv.push_back(std::move(a));
    channel().launch(sp, std::move(argv), {});
  } catch (const std::exception& e) {
    channel().refuse(e.what());
  }
}

void monitor_task_forked(const std::string& task_line) {
  const auto& s = state();
  if (s.step && s.step->monitor) channel().send(task_line);
}

void monitor_tasks_ended() { channel().stop(3.0); }

void monitor_exit() {
  channel().stop(1.0);
  channel().close();
}

}  // namespace ddp::spank
