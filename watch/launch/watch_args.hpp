// ddp-watch's command line: what the plugin, in local task 0 of a DDP step, tells the node's
// failure watch. One definition for the side that writes it (plugin/core/plan/watch_plan.cpp)
// and the side that reads it (main/watch_main.cpp). The step's key is not here (a command line is
// public): it comes in the environment variable kKeyVariable.
#pragma once

#include <cstdint>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "port.hpp"

namespace ddp::watch {

inline constexpr unsigned kMinTimeout = 5;      // seconds
inline constexpr unsigned kMaxTimeout = 86400;
inline constexpr unsigned kDefaultTimeout = 45;  // + KillWait (30 s) for a lost node: within 90 s
// A rank in uninterruptible sleep (state D) without progress is hung only after a longer time:
// a file system failing over (Lustre, GPFS, NFS) holds every rank in D for minutes, and comes
// back. The default is the larger of the time-out and this; --ddp-watch=S:D sets it.
inline constexpr unsigned kMinHungTimeout = 300;
unsigned default_hung_timeout(unsigned timeout);
// --ddp-retries (and a profile's watch.retries): new attempts of a batch job at most.
inline constexpr unsigned kMaxRetries = 100;
inline constexpr const char* kKeyVariable = "DDP_WATCH_KEY";
// The ranks' error directory of this node: a path, so not on the command line (public, and
// what a racing user would aim at); in the watch's environment only.
inline constexpr const char* kErrorDirVariable = "DDP_WATCH_ERROR_DIR";
inline constexpr std::size_t kKeyHexDigits = 32;  // 128 bits from getrandom() in srun

// A key is kKeyHexDigits lowercase hex digits.
bool valid_key(std::string_view key);

struct WatchArgs {
  std::uint32_t job = 0;
  std::uint32_t step = 0;
  unsigned node = 0;       // this node's index in the step; 0 is the head
  unsigned nodes = 1;
  std::string host;        // this node's name
  unsigned world = 1;      // ranks in the step
  std::string head;        // MASTER_ADDR: the head node's watch listens there
  plan::PortRange ports;   // the site's port range: the head's UDP port is derived within it
  unsigned timeout = kDefaultTimeout;  // seconds
  unsigned hung_timeout = 0;  // seconds for state D; 0: default_hung_timeout(timeout)
  unsigned retries = 0;    // --ddp-retries: the head requeues the job without a failed node
  unsigned restarts = 0;   // how often Slurm requeued the job so far
  std::string error_dir;   // where the ranks' error files are; "" = none (kErrorDirVariable)
  int control_fd = -1;     // what slurmstepd says (monitor/launch/control.hpp)
  int reply_fd = -1;       // where to say done; -1: control_fd (a socket, as the tests give)
};

// Without the program name and the error directory (kErrorDirVariable). parse_watch_args(
// to_argv(a)) == a but for error_dir.
std::vector<std::string> to_argv(const WatchArgs& args);
// Throws ddp::plan::PlanError naming the argument and what is allowed.
WatchArgs parse_watch_args(const std::vector<std::string>& argv);

// The error file of a rank in the step's error directory, and its name there.
std::string error_file(const std::string& dir, unsigned rank);
std::string error_file_name(unsigned rank);

}  // namespace ddp::watch
