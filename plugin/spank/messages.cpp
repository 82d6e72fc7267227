// Where the plugin's words go: a task's stderr, or Slurm's log.
#include <unistd.h>

#include <string>

#include "plugin_state.hpp"
#include "printable.hpp"
#include "spank_api.hpp"

namespace ddp::spank {

// The task's stderr goes to srun's terminal or the job's output file.
void tell_user(const std::string& line) {
  const std::string text = std::string(kLogPrefix) + plan::printable(line) + "\n";
  (void)!write(STDERR_FILENO, text.data(), text.size());
}

void log_error(const std::string& line) { slurm_error("%s%s", kLogPrefix, plan::printable(line).c_str()); }

void log_info(const std::string& line) { slurm_info("%s%s", kLogPrefix, plan::printable(line).c_str()); }

}  // namespace ddp::spank
