// The sampling loop of one node: every `interval` seconds the step's GPUs (NVML), the CPU time
// of each task's process tree and the bytes through the chosen NICs, one record per reading
// (record.hpp) into ddp-monitor-JOB.STEP-NODE.jsonl; at the end the node's summary on `summary_fd`
// (the stderr of the step's local task 0: the job's output), in a step of more than kFullNodes
// nodes the first node's alone, with a pointer to ddp-report.
//
// It stops when slurmstepd ends the control channel (the step's tasks have ended), on SIGTERM,
// SIGINT or SIGHUP, or when every task it samples is gone (by hand; with a control channel only
// after a grace period, should slurmstepd never say so). It never stops the step: a problem
// (no NVML, a file it cannot write) becomes a note in the summary.
#pragma once

#include <string>

#include "sampler_args.hpp"

namespace ddp::monitor {

struct SamplerPaths {
  std::string proc = "/proc";
  std::string sys = "/sys";
};

// The exit status: 0, or 1 when nothing could be sampled at all.
int run_sampler(const SamplerArgs& args, const SamplerPaths& paths, int summary_fd);

}  // namespace ddp::monitor
