// The symbols Slurm's plugin loader looks for, and the hooks that every context shares.
// SPANK_PLUGIN() is not used: in C++ its const globals get internal linkage and the loader then
// reports "Plugin name/type/version symbol missing".
#include <cstdlib>
#include <string>
#include <vector>

#include "error.hpp"
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

// Called from hooks' catch blocks and after them: nothing may escape into slurmstepd, and without
// memory for the words the step still fails, in plain words.
void defer_error(const std::exception& e, bool alike_on_every_node) noexcept {
  if (state().deferred_error) return;
  alike_on_every_node = alike_on_every_node || dynamic_cast<const plan::StepWideError*>(&e) != nullptr;
  try {
    state().deferred_error = DeferredError{e.what(), alike_on_every_node};
  } catch (...) {
    state().deferred_error.emplace();
  }
}

void defer_error(const char* text) noexcept {
  if (state().deferred_error) return;
  try {
    state().deferred_error = DeferredError{text, false};
  } catch (...) {
    state().deferred_error.emplace();
  }
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
      // Failing init would fail every command and step on the cluster, DDP or not (and in
      // slurmd keep the node from starting): the error is kept for DDP steps and options alone.
      state().config_error = std::string(e.what()) +
                             " (site configuration error: tell the administrator; until it is "
                             "fixed, DDP steps fail and other steps run)";
      state().config = ddp::plan::parse_good_plugstack_args(args);
    }
    // sbatch and salloc ignore the static option table: they learn options only this way, and
    // registering in other contexts as well would register them twice and disable them.
    if (ctx == S_CTX_ALLOCATOR) {
      if (std::getenv("SLURM_JOB_ID") != nullptr) ddp::spank::forget_inherited_options();
      return ddp::spank::register_options(sp);
    }
    if (ctx == S_CTX_LOCAL) ddp::spank::remember_job_shape();
    if (ctx == S_CTX_SLURMD) ddp::spank::slurmd_started();
    return 0;
  });
}
