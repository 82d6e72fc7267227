// An all-reduce bandwidth sweep's results (ddp/allreduce_bench.hpp measures one) and the arithmetic
// that plans and scores it as nccl-tests' all_reduce_perf does. Without LibTorch's headers: what
// reads or prints a sweep (ddp-preflight's reports and their tests) compiles in a second, not 20.
#pragma once

#include <cstddef>
#include <vector>

namespace ddp {

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

}  // namespace ddp
