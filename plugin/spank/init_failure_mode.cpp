// What Slurm does when this plugin's slurm_spank_init fails in slurmstepd. Slurm reads this symbol
// since the series after 24.11 (26.05's spank.h declares it, 24.11's does not; SchedMD's test of
// it dates the behaviour to 25.05): ESPANK_NODE_FAILURE, the default, drains the node;
// ESPANK_JOB_FAILURE fails the job and leaves the node in service. Nothing our init does depends
// on the node (a plugstack.conf error is kept for DDP steps alone, plugin_symbols.cpp), so an init
// that fails is this job's problem, not the node's: draining would take a healthy node out of
// service for every user.
#include "spank_api.hpp"

#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(25, 5, 0)
extern "C" {
int slurm_spank_init_failure_mode = ESPANK_JOB_FAILURE;
}
#endif
