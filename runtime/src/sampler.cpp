#include "ddp/sampler.hpp"

#include <numeric>
#include <string>

#include "ddp/error.hpp"
#include "torch_compat.hpp"

namespace ddp {

DistributedSampler::DistributedSampler(std::int64_t dataset_size, int num_replicas, int rank,
                                       bool shuffle, std::uint64_t seed, bool drop_last)
    : dataset_size_(dataset_size),
      num_replicas_(num_replicas),
      rank_(rank),
      shuffle_(shuffle),
      seed_(seed),
      drop_last_(drop_last) {
  if (dataset_size < 0)
    throw Error("DistributedSampler: dataset_size=" + std::to_string(dataset_size) +
                " is negative; give the number of samples in the dataset (0 or more).");
  if (num_replicas < 1)
    throw Error("DistributedSampler: num_replicas=" + std::to_string(num_replicas) +
                " must be 1 or more; give the job's world size (Context::world_size).");
  if (rank < 0 || rank >= num_replicas)
    throw Error("DistributedSampler: rank=" + std::to_string(rank) + " is outside 0.." +
                std::to_string(num_replicas - 1) + " (num_replicas=" +
                std::to_string(num_replicas) + "); give this process's rank (Context::rank).");
  // PyTorch: ceil(size / replicas) padded, or floor when drop_last cuts the remainder off.
  const std::int64_t whole = dataset_size / num_replicas;
  num_samples_ = drop_last || dataset_size % num_replicas == 0 ? whole : whole + 1;
}

void DistributedSampler::set_epoch(std::int64_t epoch) {
  if (epoch < 0)
    throw Error("DistributedSampler::set_epoch: epoch=" + std::to_string(epoch) +
                " is negative; count epochs from 0.");
  epoch_ = epoch;
}

std::vector<std::int64_t> DistributedSampler::indices() const {
  std::vector<std::int64_t> all;
  if (shuffle_) {
    // Unsigned wrap-around, as Python's seed + epoch reaches manual_seed modulo 2^64.
    all = detail::randperm(dataset_size_, seed_ + static_cast<std::uint64_t>(epoch_));
  } else {
    all.resize(static_cast<std::size_t>(dataset_size_));
    std::iota(all.begin(), all.end(), std::int64_t{0});
  }

  const auto total = static_cast<std::size_t>(total_size());
  if (total <= all.size()) {
    all.resize(total);  // drop_last: the tail that does not split evenly
  } else {
    // Pad with indices from the start, wrapping as often as needed (a tiny dataset, many ranks).
    const std::size_t size = all.size();
    all.reserve(total);
    for (std::size_t i = 0; all.size() < total; ++i) all.push_back(all[i % size]);
  }

  std::vector<std::int64_t> mine;
  mine.reserve(static_cast<std::size_t>(num_samples_));
  for (std::size_t i = static_cast<std::size_t>(rank_); i < total;
       i += static_cast<std::size_t>(num_replicas_))
    mine.push_back(all[i]);
  return mine;
}

}  // namespace ddp
