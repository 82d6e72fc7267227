// The --ddp-* options as Slurm sees them: one table, shown in srun/sbatch/salloc --help.
#pragma once

#include "spank_api.hpp"

namespace ddp::spank {

// Registers every option with spank_option_register (sbatch/salloc context only).
int register_options(spank_t sp);

// sbatch or salloc inside a job would take the job's own --ddp-* options from its environment
// (Slurm hands a job's options to its steps that way) and give them to the new job: a helper job
// a training script submits would become a DDP job of the training's shape. Called before Slurm
// reads them, this leaves the new job with only the options given to it.
void forget_inherited_options();

}  // namespace ddp::spank
