// The signals a terminal or Slurm sends the step's processes (SIGTERM from scancel, a time limit
// or srun's end; SIGINT and SIGQUIT from a terminal's ^C and ^\; SIGHUP from a closed terminal)
// reach the watch too: it shares its tasks' process group and cgroup. The watch does not die of
// them (it ends when slurmstepd closes its control stream, or kills it), but remembers that the
// step is being ended from outside: ranks that end now are not failures, and Slurm's KillWait,
// not the watch, decides when SIGKILL comes.
#pragma once

namespace ddp::watch {

// Installs the handler (SA_RESTART off: poll() wakes at once).
void catch_end_signals();
// One of them has arrived since catch_end_signals().
bool end_requested();

}  // namespace ddp::watch
