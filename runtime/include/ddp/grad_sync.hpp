// Gradient averaging for data-parallel training, overlapped with the backward pass.
//
// As in PyTorch's c10d Reducer: parameters are grouped, in reverse registration order (roughly
// the order backward produces their gradients), into flat buckets of about `bucket_bytes`. A hook
// on each parameter's gradient accumulator sees the fresh gradient in its bucket (accumulated there
// in place from the second step on, copied in on the first); when a
// bucket is full its all-reduce starts at once, while backward goes on computing the next
// gradients. finish() waits once at the end and writes the averages back. Buckets always start
// in the same order on every rank, which collectives require.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <vector>

#include <torch/torch.h>

#include "ddp/process_group.hpp"

namespace ddp {

struct GradSyncOptions {
  std::size_t bucket_bytes = 25u << 20;
  bool overlap = true;  // false: all-reduce every bucket after backward (for comparison)
};

struct GradSyncStats {
  std::size_t buckets = 0;
  double wait_seconds = 0;  // time finish() spent waiting on communication, last step
  std::size_t copied = 0;   // gradients copied into buckets, last step (0 once they live there)
};

class GradientSynchronizer {
 public:
  GradientSynchronizer(std::vector<torch::Tensor> parameters, std::shared_ptr<ProcessGroup> group,
                       GradSyncOptions options = {});
  ~GradientSynchronizer();
  GradientSynchronizer(const GradientSynchronizer&) = delete;
  GradientSynchronizer& operator=(const GradientSynchronizer&) = delete;

  // Rank 0's parameter values (and any other tensors, e.g. batch-norm buffers) to every rank.
  void broadcast_from_main(std::vector<torch::Tensor> tensors);

  // Call after each backward: every parameter's .grad() is then the mean over ranks. A parameter
  // that got no gradient on this rank counts as zero. The gradients are then views into the
  // buckets (PyTorch DDP's gradient_as_bucket_view): zero them in place between steps (as
  // torch::optim does with set_to_none=false) and the next backward writes straight into the
  // buckets; replaced or dropped gradients work too, at the cost of a copy.
  void finish();

  GradSyncStats stats() const;

  struct State;

 private:
  std::shared_ptr<State> state_;
};

}  // namespace ddp
