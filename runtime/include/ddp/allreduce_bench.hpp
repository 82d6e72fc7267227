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

struct AllreduceSample {
  std::size_t bytes = 0;
  int iterations = 0;
  double seconds = 0;     // one all-reduce, the mean over the group's ranks
  double algbw_gbps = 0;  // GB/s (1e9 bytes per second), as nccl-tests prints them
  double busbw_gbps = 0;
};

struct AllreduceSweep {
  int ranks = 0;
  std::vector<AllreduceSample> samples;  // by size, smallest first; never empty
  bool cut_short = false;                // the budget ended the sweep before max_bytes
  // The smallest size's time: the latency of an all-reduce.
  double latency_seconds() const;
  // The highest bus bandwidth of the sweep and the size it was reached at.
  const AllreduceSample& peak() const;
};

// nccl-tests' all-reduce factor 2(n-1)/n (0 for one rank, which moves nothing).
double allreduce_bus_factor(int ranks);
AllreduceSample allreduce_sample(std::size_t bytes, int iterations, double seconds, int ranks);

// min_bytes, min_bytes*factor, ... up to max_bytes, which is always the last. Sizes are whole
// float32 elements (multiples of 4 bytes). Throws ddp::Error for sizes or a factor that make no
// sweep.
std::vector<std::size_t> allreduce_sweep_sizes(std::size_t min_bytes, std::size_t max_bytes,
                                               std::size_t factor);

// How many timed all-reduces of one size: as many as fit its `share` of the budget when one takes
// `seconds_each` (1..max_iterations), but at least 5 while they cost under a tenth of the time
// `left`: a single small all-reduce is too noisy a latency.
int allreduce_iterations(double seconds_each, double share, double left, int max_iterations);

// A size's share of the budget `left` when the sizes after it are `later` times as large (their
// sum of size ratios): larger sizes take longer, so the time left is shared in proportion.
double allreduce_share(double left, double later);

// Collective over `group`: every member calls it with the same options. Every decision (how many
// iterations, when to stop) is taken from times averaged over the ranks, so all ranks take it
// alike. On GPUs the tensors live on group.device() and every timing waits for the device.
AllreduceSweep measure_allreduce(ProcessGroup& group, const AllreduceBenchOptions& options = {});

}  // namespace ddp
