// Runs ddp-preflight from task_init: in the task's own process, as the job's user, just before
// Slurm execs the user's program, with the environment the program is about to get. Every rank
// runs its own copy at the same moment (slurmstepd releases a node's tasks together), so the
// preflight meets the others at MASTER_ADDR:MASTER_PORT as the program will. Slurm 22.05 has no
// spank_prepend_task_argv; this needs none, and works alike on later releases.
#pragma once

#include <optional>
#include <string>

#include "preflight.hpp"
#include "spank_api.hpp"

namespace ddp::spank {

// Waits at most run.timeout_s and kills the preflight after that, so a hang cannot keep the task
// (let alone slurmstepd) waiting. Nothing on success, else why the program must not start.
std::optional<std::string> run_preflight(spank_t sp, const plan::PreflightRun& run);

}  // namespace ddp::spank
