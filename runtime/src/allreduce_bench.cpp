#include "ddp/allreduce_bench.hpp"

#include <algorithm>
#include <cmath>

#include <torch/cuda.h>

#include "ddp/error.hpp"

namespace ddp {
namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Seconds per all-reduce of `tensor` over `count` back-to-back ones, waited for on the device.
// One at a time, as all_reduce_perf issues them on one stream.
double time_allreduces(ProcessGroup& group, torch::Tensor& tensor, int count) {
  group.barrier();
  const auto start = Clock::now();
  for (int i = 0; i < count; ++i) group.allreduce_sum(tensor, "the bandwidth test").wait();
  if (tensor.is_cuda()) torch::cuda::synchronize(tensor.device().index());
  return since(start) / std::max(count, 1);
}

}  // namespace

AllreduceSweep measure_allreduce(ProcessGroup& group, const AllreduceBenchOptions& o) {
  const auto sizes = allreduce_sweep_sizes(o.min_bytes, o.max_bytes, o.factor);
  const int warmup = std::max(o.warmup, 1);  // the warm-up's time plans the timed all-reduces
  const double budget = std::chrono::duration<double>(o.budget).count();
  const int ranks = group.context().world_size;
  AllreduceSweep sweep;
  sweep.ranks = ranks;
  // Time spent so far, as the ranks agree on it (means over ranks), so every rank stops alike.
  double spent = 0;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const std::size_t bytes = sizes[i];
    if (i > 0) {
      // Bandwidth-bound from here on at worst: time grows with the size.
      const AllreduceSample& last = sweep.samples.back();
      const double predicted = last.seconds * static_cast<double>(bytes) / last.bytes;
      if (spent + predicted * (warmup + 1) > budget) {
        sweep.cut_short = true;
        break;
      }
    }
    auto tensor = torch::zeros({static_cast<std::int64_t>(bytes / 4)},
                               torch::TensorOptions().dtype(torch::kFloat32).device(group.device()));
    const double warm = group.mean(time_allreduces(group, tensor, warmup));
    spent += warm * warmup;
    double later = 0;
    for (std::size_t j = i + 1; j < sizes.size(); ++j) later += static_cast<double>(sizes[j]) / bytes;
    const double left = budget - spent;
    const int iterations =
        allreduce_iterations(warm, allreduce_share(left, later), left, o.max_iterations);
    const double each = group.mean(time_allreduces(group, tensor, iterations));
    spent += each * iterations;
    sweep.samples.push_back(allreduce_sample(bytes, iterations, each, ranks));
  }
  return sweep;
}

}  // namespace ddp
