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

double AllreduceSweep::latency_seconds() const {
  return samples.empty() ? 0.0 : samples.front().seconds;
}

const AllreduceSample& AllreduceSweep::peak() const {
  if (samples.empty()) throw Error("an all-reduce sweep without samples has no peak");
  return *std::max_element(samples.begin(), samples.end(),
                           [](const AllreduceSample& a, const AllreduceSample& b) {
                             return a.busbw_gbps < b.busbw_gbps;
                           });
}

double allreduce_bus_factor(int ranks) {
  return ranks <= 1 ? 0.0 : 2.0 * (ranks - 1) / ranks;
}

AllreduceSample allreduce_sample(std::size_t bytes, int iterations, double seconds, int ranks) {
  AllreduceSample s;
  s.bytes = bytes;
  s.iterations = iterations;
  s.seconds = seconds;
  s.algbw_gbps = seconds > 0 ? static_cast<double>(bytes) / seconds / 1e9 : 0.0;
  s.busbw_gbps = s.algbw_gbps * allreduce_bus_factor(ranks);
  return s;
}

std::vector<std::size_t> allreduce_sweep_sizes(std::size_t min_bytes, std::size_t max_bytes,
                                               std::size_t factor) {
  if (min_bytes < 4 || max_bytes < min_bytes || factor < 2 || max_bytes > (std::size_t{1} << 40))
    throw Error("an all-reduce sweep needs 4 <= min_bytes <= max_bytes <= 1 TiB and a factor of "
                "at least 2; got " + std::to_string(min_bytes) + ".." + std::to_string(max_bytes) +
                " by " + std::to_string(factor));
  const auto whole = [](std::size_t b) { return std::max<std::size_t>(4, b / 4 * 4); };
  std::vector<std::size_t> sizes;
  for (std::size_t b = min_bytes; b < max_bytes; b *= factor) {
    sizes.push_back(whole(b));
    if (b > max_bytes / factor) break;
  }
  if (sizes.empty() || sizes.back() != whole(max_bytes)) sizes.push_back(whole(max_bytes));
  return sizes;
}

int allreduce_iterations(double seconds_each, double share, double left, int max_iterations) {
  constexpr int kFew = 5;
  const int most = std::max(max_iterations, 1);
  if (!(seconds_each > 0)) return most;
  const double fit = std::floor(share / seconds_each);
  int n = !(fit >= 1) ? 1 : fit >= most ? most : static_cast<int>(fit);
  if (n < kFew && seconds_each * kFew < left / 10) n = std::min(kFew, most);
  return n;
}

double allreduce_share(double left, double later) {
  return std::max(left, 0.0) / (1.0 + std::max(later, 0.0));
}

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
