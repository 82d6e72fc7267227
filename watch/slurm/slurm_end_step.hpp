// Ends the step through slurmctld, as `scancel JOB.STEP` would, for the one case the watches
// cannot end alone: a node nobody can reach. Slurm then signals every node it can reach, and
// srun stops waiting for the lost node's tasks after KillWait + 2 s (src/api/step_launch.c)
// instead of until the node is marked down.
//
// libslurm is opened only here, on that failure path, by its soname (the one this build was
// compiled against): a step that does not fail never loads it, so the watch starts in a
// millisecond. Runs in a child process, so the watch never waits for slurmctld.
#pragma once

#include <cstdint>

namespace ddp::watch {

void end_step_through_slurm(std::uint32_t job, std::uint32_t step);

}  // namespace ddp::watch
