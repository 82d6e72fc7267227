// The training step as a CUDA graph: run eagerly for a few warm-up steps (cuDNN's autotuning, the
// gradient buckets settling, the loss scaler's first steps), then captured once and replayed for
// every later step. A replay is one launch for the whole step (augmentation, forward, backward,
// the gradient all-reduce, loss scaling and the optimizer), so the GPU no longer waits between
// the step's few hundred kernels for the host to launch them. The step must be graph-safe: no
// host reads of device values, no copies from host memory, random numbers from Torch's device
// generators (graph-aware), the same shapes every step. Its input is the batch's indices, which
// each replay copies into the captured step's own index tensor.
// Built into CUDA builds of LibTorch (DDP_TRAINER_CUDA); elsewhere it always runs eagerly.
#pragma once

#include <torch/torch.h>

#include <functional>
#include <memory>

namespace ddp::trainer {

// Whether this build can capture CUDA graphs.
bool cuda_graphs_built();

// While it lives, the calling thread's current CUDA stream (on `device`) is a stream of its own:
// graphs cannot be captured on the default stream. Made before the model's gradient hooks, so that
// backward's gradient accumulation and all-reduces run on it too. Does nothing on a CPU device.
class TrainingStream {
 public:
  explicit TrainingStream(const torch::Device& device);
  ~TrainingStream();
  TrainingStream(const TrainingStream&) = delete;
  TrainingStream& operator=(const TrainingStream&) = delete;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

class StepGraph {
 public:
  using Step = std::function<void(const torch::Tensor& indices)>;
  // graph false (or a build without CUDA graphs): every step runs eagerly.
  StepGraph(Step step, bool graph, int warmup_steps = 3);
  ~StepGraph();
  void run(const torch::Tensor& indices);
  bool captured() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ddp::trainer
