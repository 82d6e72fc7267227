// The --ddp-* options as Slurm sees them: one table, shown in srun/sbatch/salloc --help.
#pragma once

#include "spank_api.hpp"

namespace ddp::spank {

// Registers every option with spank_option_register (sbatch/salloc context only).
int register_options(spank_t sp);

}  // namespace ddp::spank
