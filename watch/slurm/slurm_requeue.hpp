// --ddp-retries' requeue, as the job's own user: the head's watch asks slurmctld to requeue the
// batch job, then adds the failed nodes to its excluded nodes. In that order: Slurm changes
// ExcNodeList only while a job is pending, and a requeued job is pending (and still completing)
// as soon as the requeue returns; it starts again only after its nodes are clean and its
// BeginTime (AuthInfo=cred_expire, about 2 minutes) has passed. The user's own --exclude is kept.
//
// Nothing is requeued when the partition would have fewer nodes left than the job needs: such a
// job would wait in the queue for ever. Runs in a child process, bounded in time: slurmctld may
// be slow, and the step is ending anyway.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "retry.hpp"

namespace ddp::watch {

// What to say in the job's output after the decision's own line (each without the watch's
// prefix), for a decision of kind Retry or Exhausted: the requeue's outcome, or why it did not
// happen and what the user can do.
std::vector<std::string> requeue_through_slurm(std::uint32_t job, const RetryDecision& decision);

// The same in this process, bounded only by libslurm's own time-outs (MessageTimeout per
// request): for a process with threads of its own (ddp-preflight: Gloo, OpenMP), where a child
// must not call libslurm, and that ignores the requeue's SIGTERM itself.
std::vector<std::string> requeue_here(std::uint32_t job, const RetryDecision& decision);

// What a step's process says moves through slurmstepd to srun, which drops what is still on the
// way when the step ends: in the lab, lines said 5 ms before the watch ended the step were lost
// on every run (7 of 7), and with a pause of 300 ms on one run of about 20. The retry's lines say
// whether and how the job goes on: a second before the step ends.
void let_srun_hear();

}  // namespace ddp::watch
