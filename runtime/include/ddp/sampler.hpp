// Which dataset indices this rank reads in an epoch, with PyTorch's DistributedSampler rules, so
// a C++ trainer and a Python one given the same seed and epoch visit the same samples in the
// same order on every rank.
#pragma once

#include <cstdint>
#include <vector>

namespace ddp {

class DistributedSampler {
 public:
  // Throws ddp::Error for a negative dataset size, num_replicas < 1, or a rank outside
  // 0..num_replicas-1.
  DistributedSampler(std::int64_t dataset_size, int num_replicas, int rank, bool shuffle = true,
                     std::uint64_t seed = 0, bool drop_last = false);

  // Reshuffles for the next epoch: call it before each epoch, with the same value on every rank.
  void set_epoch(std::int64_t epoch);
  std::int64_t epoch() const { return epoch_; }

  // This rank's indices for the current epoch: num_samples() of them. Shuffled with
  // torch::randperm seeded with seed + epoch; then padded by repeating from the start
  // (drop_last = false) or cut (drop_last = true) to total_size(); then every num_replicas-th
  // index from position `rank`.
  std::vector<std::int64_t> indices() const;

  std::int64_t num_samples() const { return num_samples_; }  // per rank and epoch
  std::int64_t total_size() const { return num_samples_ * num_replicas_; }  // over all ranks

  std::int64_t dataset_size() const { return dataset_size_; }
  int num_replicas() const { return num_replicas_; }
  int rank() const { return rank_; }

 private:
  std::int64_t dataset_size_;
  int num_replicas_;
  int rank_;
  bool shuffle_;
  std::uint64_t seed_;
  bool drop_last_;
  std::int64_t epoch_ = 0;
  std::int64_t num_samples_ = 0;
};

}  // namespace ddp
