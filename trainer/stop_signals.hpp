// SIGTERM and SIGUSR1 ask ddp-cifar100 to stop at the next step boundary, save a checkpoint and
// exit with kExitStopped, as Lightning and submitit do: Slurm sends SIGTERM at a time limit or a
// preemption (KillWait seconds before SIGKILL), and SIGUSR1 where the job asked for a warning
// (`sbatch --signal=B:USR1@120`, which the job script passes on to srun). The job script then
// requeues the job (`scontrol requeue`), or Slurm does (preemption), and the checkpoint resumes it
// at that step.
#pragma once

#include <string>

#include "ddp/process_group.hpp"

namespace ddp::trainer {

// The exit status of a run stopped by one of these signals after saving its checkpoint: not a
// failure, and not done either.
inline constexpr int kExitStopped = 3;

class StopSignals {
 public:
  // Installs the handlers. When it ends the previous ones come back, unless the ranks agreed to
  // stop (agreed_stop): then the two signals stay ignored while the process leaves.
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  // The signal this process received, 0 while none: safe to read at any time.
  static int received();
  // "SIGTERM", "SIGUSR1".
  static std::string name(int signal);
};

// The signal any rank received (SIGTERM before SIGUSR1), 0 when none, the same on every rank: one
// small all-reduce, so that all ranks stop at the same step. Every rank calls it at the same step.
int agreed_stop(ProcessGroup& group);

}  // namespace ddp::trainer
