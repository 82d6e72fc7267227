// A helper program that local task 0 starts for the step on its node (the --ddp-monitor sampler,
// the failure watch), and the control channel slurmstepd keeps with it:
//
//   init_post_opt  slurmstepd   open(): two pipes, before the tasks are forked
//   task_post_fork slurmstepd   send(): lines for the helper (monitor/launch/control.hpp)
//   task_init      local task 0 launch(): fork, fork again (the helper is no child of the user's
//                               program) and exec it as the job's user, with the job's
//                               environment and the task's limits, its ends of the channel as
//                               fds 3 (to read) and 4 (to write)
//   task_exit      slurmstepd   stop(): after the node's last task, end the stream, wait a few
//                               seconds at most for the helper's `done`, then kill it
//   exit           slurmstepd   the same, if the tasks never all started or ended; close()
//
// What the helper says is the user's word (it runs the job's environment, LD_PRELOAD included):
// slurmstepd reads it within a deadline and the channel's limits, from a pipe (which cannot carry
// a descriptor), opens a pidfd only for the process the first line names, which the plugin's own
// code wrote before the helper ran, and kills nothing but that process.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "spank_api.hpp"

namespace ddp::spank {

// How the warnings name the helper: "warning: OPTION: cannot start PROGRAM; WITHOUT".
struct HelperTexts {
  const char* option;   // "--ddp-monitor"
  const char* name;     // "the sampler"
  const char* without;  // "this step runs unmonitored"
  const char* lost;     // what a helper killed at the end did not get to do
  const char* setting;  // the plugstack.conf argument naming the program: "monitor=PATH"
};

class HelperChannel {
 public:
  explicit HelperChannel(HelperTexts texts) : texts_(texts) {}
  HelperChannel(const HelperChannel&) = delete;
  HelperChannel& operator=(const HelperChannel&) = delete;

  // slurmstepd, before the tasks are forked. False (and nothing open) when it cannot.
  bool open(spank_t sp);
  bool is_open() const { return to_helper_ >= 0; }

  // Local task 0's task_init, as the job's user: starts argv[0] with the job's environment plus
  // `extra_env` ("NAME=VALUE", for the helper alone). A problem is said on the task's stderr and
  // leaves the step without the helper; it never fails the task.
  void launch(spank_t sp, std::vector<std::string> argv, const std::vector<std::string>& extra_env);

  // slurmstepd: one line for the helper; never blocks.
  void send(const std::string& line) const;
  // slurmstepd: ends the stream and waits at most `timeout` seconds for the helper to finish.
  void stop(double timeout);
  void close();

  // The task's stderr: "spank_ddp: warning: OPTION: WHY; WITHOUT".
  void refuse(const std::string& why) const;

 private:
  HelperTexts texts_;
  // slurmstepd's ends, and the helper's until stop(): while slurmstepd holds the helper's read
  // end, its writes never meet a closed pipe (SIGPIPE).
  int to_helper_ = -1;
  int from_helper_ = -1;
  int helper_reads_ = -1;
  int helper_writes_ = -1;
  // Who the helper is: written by the plugin's own code before the helper runs, on a pipe the
  // helper never holds.
  int identity_ = -1;
  int identity_writes_ = -1;
  pid_t owner_ = -1;  // the slurmstepd that opened the channel
  void release(int& fd);
  uid_t job_uid_ = 0;
  bool stopped_ = false;
};

}  // namespace ddp::spank
