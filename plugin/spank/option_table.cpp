#include "option_table.hpp"

#include <cstddef>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>

#include "options.hpp"
#include "plugin_state.hpp"

namespace ddp::spank {
namespace {

namespace p = ddp::plan;

// The callback's `val` is the index of the option in the table below.
int on_option(int val, const char* optarg, int remote);

constexpr int kFlag = 0;
constexpr int kRequired = 1;
constexpr int kOptional = 2;

// Slurm's struct wants char*, though it never writes through them.
char* s(const char* text) { return const_cast<char*>(text); }

}  // namespace
}  // namespace ddp::spank

extern "C" {
struct spank_option spank_options[] = {
    {ddp::spank::s(ddp::plan::kOptDdp), ddp::spank::s("PROFILE"),
     ddp::spank::s("Launch the step for PyTorch DDP: export RANK, WORLD_SIZE, MASTER_ADDR... "
                   "to every task (optionally with cluster profile PROFILE)."),
     ddp::spank::kOptional, 0, ddp::spank::on_option},
    {ddp::spank::s(ddp::plan::kOptNodes), ddp::spank::s("N"),
     ddp::spank::s("DDP over N nodes (with the slurm-ddp cli_filter this requests them)."),
     ddp::spank::kRequired, 1, ddp::spank::on_option},
    {ddp::spank::s(ddp::plan::kOptGpus), ddp::spank::s("G"),
     ddp::spank::s("G GPUs per node, one task per GPU (with the cli_filter this requests them)."),
     ddp::spank::kRequired, 2, ddp::spank::on_option},
    {ddp::spank::s(ddp::plan::kOptProfile), ddp::spank::s("NAME"),
     ddp::spank::s("Cluster profile NAME from the site's profile directory."),
     ddp::spank::kRequired, 3, ddp::spank::on_option},
    {ddp::spank::s(ddp::plan::kOptPort), ddp::spank::s("PORT|auto"),
     ddp::spank::s("Rendezvous port (MASTER_PORT); auto = Slurm's reserved port or one derived "
                   "from the job and step id."),
     ddp::spank::kRequired, 4, ddp::spank::on_option},
    {ddp::spank::s(ddp::plan::kOptBackend), ddp::spank::s("nccl|gloo"),
     ddp::spank::s("Process-group backend (default: nccl with GPUs, gloo without)."),
     ddp::spank::kRequired, 5, ddp::spank::on_option},
    {ddp::spank::s(ddp::plan::kOptBind), ddp::spank::s("closest|none"),
     ddp::spank::s("CPU binding of each rank (default closest)."),
     ddp::spank::kRequired, 6, ddp::spank::on_option},
    {ddp::spank::s(ddp::plan::kOptVerbose), nullptr,
     ddp::spank::s("Print each task's DDP plan on its stderr."), ddp::spank::kFlag, 7,
     ddp::spank::on_option},
    {ddp::spank::s(ddp::plan::kOptMonitor), ddp::spank::s("SECONDS|off"),
     ddp::spank::s("Sample GPUs, the tasks' CPU use and NIC bytes every SECONDS (default 10) "
                   "into a file per node; a summary per node and GPU ends the job's output."),
     ddp::spank::kOptional, 8, ddp::spank::on_option},
    {ddp::spank::s(ddp::plan::kOptPreflight), ddp::spank::s("yes|no"),
     ddp::spank::s("Before the program starts, check every rank and measure all-reduce "
                   "bandwidth (ddp-preflight); the step fails when a check or a profile "
                   "threshold fails."),
     ddp::spank::kOptional, 9, ddp::spank::on_option},
    {ddp::spank::s(ddp::plan::kOptWatch), ddp::spank::s("SECONDS[:D_SECONDS]|off"),
     ddp::spank::s("The failure watch (on by default): a failed rank ends the step at once and is "
                   "named once; a rank stopped or a node silent for SECONDS (default 45) ends it "
                   "too, a rank hung in state D for D_SECONDS (default the larger of 300 and "
                   "SECONDS). off: Slurm's own behaviour."),
     ddp::spank::kOptional, 10, ddp::spank::on_option},
    {ddp::spank::s(ddp::plan::kOptRetries), ddp::spank::s("N"),
     ddp::spank::s("When the failure watch or the preflight names a node (a rank killed, stopped "
                   "or hung there, the node silent or slow), requeue the batch job without that "
                   "node, up to N times; the program resumes from its checkpoint. A failure that "
                   "names no node (an exception, an exit code, a crash) is not retried. sbatch "
                   "only."),
     ddp::spank::kRequired, 11, ddp::spank::on_option},
    SPANK_OPTIONS_TABLE_END};
}

extern "C" const char plugin_name[];  // plugin_symbols.cpp

namespace ddp::spank {
namespace {

constexpr std::size_t kOptionCount = sizeof(spank_options) / sizeof(spank_options[0]) - 1;

// srun hands each option to the plugin first as inherited from sbatch/salloc (their
// SLURM_SPANK_... variable), then again for each time its own command line gives it. So a call
// beyond the inherited one is srun's own command line, which is what makes a step a DDP step of
// its own shape (step_role.hpp).
// Returns whether this call is srun's own command line.
// The variable that carries option `index` from sbatch/salloc to the job's steps.
std::string inherited_variable(std::size_t index) {
  std::string var = std::string("SLURM_SPANK__SLURM_SPANK_OPTION_") + plugin_name + "_" + spank_options[index].name;
  for (char& c : var)
    if (c == '-') c = '_';
  return var;
}

bool note_command_line(std::size_t index, std::string_view value) {
  static std::size_t calls[kOptionCount] = {};
  const std::string name = spank_options[index].name;
  const bool inherited = std::getenv(inherited_variable(index).c_str()) != nullptr;
  if (inherited && calls[index]++ == 0) return false;
  auto& given = state().command_line;
  if (name == p::kOptNodes) given.nodes = true;
  if (name == p::kOptGpus) given.gpus = true;
  // Like --ddp-verbose, --ddp-monitor, --ddp-watch and --ddp-retries say how to run a DDP step, not which steps
  // are DDP steps.
  const bool shapes_nothing =
      name == p::kOptVerbose || name == p::kOptMonitor || name == p::kOptWatch ||
      name == p::kOptRetries;
  if (!shapes_nothing && !(name == p::kOptDdp && value == p::kDdpOff)) given.any_ddp = true;
  return true;
}

int on_option(int val, const char* optarg, int remote) {
  return guarded("option", [&] {
    if (val < 0 || static_cast<std::size_t>(val) >= kOptionCount) return -1;
    const char* name = spank_options[val].name;
    // sbatch/salloc pass an option without its optional value on to srun as the text "(null)"
    // (SLURM_SPANK__SLURM_SPANK_OPTION_...=(null)): that is no value, not a value.
    const char* value = optarg && std::string_view(optarg) != "(null)" ? optarg : "";
    try {
      const bool typed = spank_context() != S_CTX_LOCAL ||
                         note_command_line(static_cast<std::size_t>(val), value);
      // Options a job passes on to its steps are judged in slurmstepd, which knows whether the
      // step is a DDP step (step_role.hpp): a plain step of the job runs despite the error.
      if (state().config_error && !remote && typed) throw std::runtime_error(*state().config_error);
      p::apply_user_option(state().options, name, value);
    } catch (const std::exception& e) {
      if (!remote) {
        // srun/sbatch/salloc stop here, before anything is submitted.
        ddp::spank::log_error(e.what());
        return -1;
      }
      // The job's options reach every node alike.
      ddp::spank::defer_error(e, /*alike_on_every_node=*/true);
    }
    return 0;
  });
}

}  // namespace

void forget_inherited_options() {
  for (std::size_t i = 0; i < kOptionCount; ++i) (void)unsetenv(inherited_variable(i).c_str());
}

int register_options(spank_t sp) {
  for (std::size_t i = 0; i < kOptionCount; ++i) {
    const spank_err_t rc = spank_option_register(sp, &spank_options[i]);
    if (rc != ESPANK_SUCCESS) {
      log_error(std::string("cannot register --") + spank_options[i].name + ": " + spank_strerror(rc));
      return -1;
    }
  }
  return 0;
}

}  // namespace ddp::spank
