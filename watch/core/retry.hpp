// --ddp-retries: whether a failure names a node that a new attempt of the job should run without
// (the head watch's verdict, ddp-preflight's), and what the job's output says about it.
// Slurm-free: the requeue itself is slurm/slurm_requeue.hpp.
//
// A rank killed (SIGKILL: the kernel's OOM killer, a node health check, an admin) or ended by a
// bus error (SIGBUS: bad memory), stopped, hung in state D, or one node that went silent names
// its node: the same program on other nodes may well succeed. A rank that exited with a code or
// crashed by another signal (SIGSEGV, SIGABRT...) names no node: a raised exception, a bad
// argument or a bug fails the same way anywhere, and a new attempt would only spend an
// allocation. So do several nodes silent at once: a network, not a node.
#pragma once

#include <string>
#include <vector>

#include "judge.hpp"

namespace ddp::watch {

struct RetryPlan {
  unsigned retries = 0;   // --ddp-retries: new attempts allowed after the first; 0 = off
  unsigned restarts = 0;  // how often Slurm requeued the job so far (SLURM_RESTART_COUNT)
};

struct RetryDecision {
  enum class Kind {
    Off,        // --ddp-retries not given: nothing is said, Slurm's behaviour
    Retry,      // requeue the job without `nodes`
    NoNode,     // the failure names no node: not retried
    Exhausted,  // every attempt is used
  };
  Kind kind = Kind::Off;
  std::vector<std::string> nodes;  // Retry, Exhausted: the nodes the failure names (host names)
  unsigned attempt = 1;            // the attempt that failed, from 1
  unsigned attempts = 1;           // 1 + retries
  std::string line;                // what the job's output says; "" for Off
};

RetryDecision decide_retry(const Verdict& verdict, const RetryPlan& plan);

// "n3,n5": NODES as said in the job's output and given to --exclude=.
std::string node_list(const std::vector<std::string>& nodes);

// Whether a rank's death by SIGNAL names its node (above).
bool names_its_node(int signal);

// A failure that names its NODES itself (ddp-preflight's verdict), in WHAT's words; no node named:
// not retried.
RetryDecision decide_retry(const std::vector<std::string>& nodes, const std::string& what,
                           const RetryPlan& plan);

}  // namespace ddp::watch
