// All-reduce bandwidth and latency of a process group, measured as NVIDIA's nccl-tests
// (all_reduce_perf) measures them, so the numbers compare with theirs: a sweep of message sizes
// from small to large, the time of one all-reduce at each, the algorithm bandwidth
// algbw = bytes / time and the bus bandwidth busbw = algbw * 2(n-1)/n, which for n ranks is what
// each rank's link carries and so does not fall as ranks are added. Unlike all_reduce_perf the
// sweep keeps to a time budget: on a slow link it stops before the largest sizes rather than
// take minutes.
#pragma once

#include <chrono>
#include <cstddef>
#include <vector>

#include "ddp/allreduce_sweep.hpp"
#include "ddp/process_group.hpp"

namespace ddp {

struct AllreduceBenchOptions {
  std::size_t min_bytes = 8;         // nccl-tests -b 8
  std::size_t max_bytes = 64 << 20;  // nccl-tests -e 64M
  std::size_t factor = 8;            // nccl-tests -f (it defaults to 2; 8 keeps to seconds)
  int warmup = 1;                    // untimed all-reduces before each size's timed ones
  int max_iterations = 20;           // timed all-reduces per size, at most (at least 1)
  std::chrono::milliseconds budget{2000};  // for the whole sweep, warm-up included
};

// Collective over `group`: every member calls it with the same options. Every decision (how many
// iterations, when to stop) is taken from times averaged over the ranks, so all ranks take it
// alike. On GPUs the tensors live on group.device() and every timing waits for the device.
AllreduceSweep measure_allreduce(ProcessGroup& group, const AllreduceBenchOptions& options = {});

}  // namespace ddp
