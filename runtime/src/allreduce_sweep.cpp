#include "ddp/allreduce_sweep.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "ddp/error.hpp"

namespace ddp {

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

}  // namespace ddp
