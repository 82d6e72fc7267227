// The symbols Slurm's plugin loader looks for, and the hooks that every context shares.
// SPANK_PLUGIN() is not used: in C++ its const globals get internal linkage and the loader then
// reports "Plugin name/type/version symbol missing".
#include <string>
#include <vector>

#include "option_table.hpp"
#include "plugin_state.hpp"
#include "spank_api.hpp"

extern "C" {
extern const char plugin_name[] = "spank_ddp";
extern const char plugin_type[] = "spank";
extern const unsigned int plugin_version = SLURM_VERSION_NUMBER;
extern const unsigned int spank_plugin_version = 1;
}

namespace ddp::spank {

PluginState& state() {
  static PluginState instance;
  return instance;
}

}  // namespace ddp::spank

using ddp::spank::guarded;
using ddp::spank::state;

extern "C" int slurm_spank_init(spank_t sp, int ac, char** av) {
  return guarded("init", [&] {
    const spank_context_t ctx = spank_context();
    std::vector<std::string> args(av, av + ac);
    try {
      state().config = ddp::plan::parse_plugstack_args(args);
    } catch (const std::exception& e) {
      // In slurmstepd a failing init only says "required plugin failed" in slurmd's log: keep the
      // message for task_init, where the user sees it. In slurmd it would keep the node from
      // starting, and plain jobs need none of this.
      if (ctx != S_CTX_REMOTE && ctx != S_CTX_SLURMD) throw;
      state().deferred_error = std::string("plugstack.conf: ") + e.what() +
                               " (site configuration error: tell the administrator)";
    }
    // sbatch and salloc ignore the static option table: they learn options only this way, and
    // registering in other contexts as well would register them twice and disable them.
    if (ctx == S_CTX_ALLOCATOR) return ddp::spank::register_options(sp);
    if (ctx == S_CTX_LOCAL) ddp::spank::remember_job_shape();
    if (ctx == S_CTX_SLURMD) ddp::spank::slurmd_started();
    return 0;
  });
}
