#include "step_graph.hpp"

#include <stdexcept>
#include <string>

#ifdef DDP_TRAINER_CUDA
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>
#endif

namespace ddp::trainer {

#ifdef DDP_TRAINER_CUDA

bool cuda_graphs_built() { return true; }

struct TrainingStream::Impl {
  std::unique_ptr<c10::cuda::CUDAStreamGuard> guard;
};

TrainingStream::TrainingStream(const torch::Device& device) : impl_(std::make_unique<Impl>()) {
  if (!device.is_cuda()) return;
  // What ran before (the data copied to the GPU) ran on the default stream: finish it first.
  torch::cuda::synchronize(device.index());
  impl_->guard = std::make_unique<c10::cuda::CUDAStreamGuard>(
      c10::cuda::getStreamFromPool(false, device.index()));
}

TrainingStream::~TrainingStream() {
  if (!impl_->guard) return;
  // Hand the default stream back with nothing pending on ours. (An error here was already
  // reported by the operation that caused it.)
  try {
    c10::cuda::getCurrentCUDAStream().synchronize();
  } catch (const std::exception&) {
  }
}

struct StepGraph::Impl {
  Step step;
  bool graph = false;
  int warmup = 0;
  int eager_steps = 0;
  torch::Tensor indices;  // the captured step's input
  std::unique_ptr<at::cuda::CUDAGraph> cuda_graph;
};

namespace {

// A failed capture leaves the stream capturing: end it, so that the error can be reported.
void abandon_capture() {
  cudaGraph_t partial = nullptr;
  const cudaStream_t stream = c10::cuda::getCurrentCUDAStream().stream();
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &status) == cudaSuccess &&
      status != cudaStreamCaptureStatusNone) {
    cudaStreamEndCapture(stream, &partial);
    if (partial) cudaGraphDestroy(partial);
  }
  (void)cudaGetLastError();
}

}  // namespace

void StepGraph::run(const torch::Tensor& indices) {
  Impl& m = *impl_;
  if (!m.graph || !indices.is_cuda() || (!m.cuda_graph && m.eager_steps < m.warmup)) {
    m.step(indices);
    ++m.eager_steps;
    return;
  }
  if (!m.cuda_graph) {
    m.indices = indices.clone();
    // The warm-up steps' work done, nothing of it is captured.
    c10::cuda::getCurrentCUDAStream().synchronize();
    auto graph = std::make_unique<at::cuda::CUDAGraph>();
    try {
      // Thread-local: other threads (NCCL's watchdog) may keep calling CUDA while we capture.
      graph->capture_begin({0, 0}, cudaStreamCaptureModeThreadLocal);
      m.step(m.indices);
      graph->capture_end();
    } catch (const std::exception& e) {
      abandon_capture();
      throw std::runtime_error(std::string("capturing the training step in a CUDA graph failed: ") +
                               e.what() + " (train without it: --cuda-graph off)");
    }
    m.cuda_graph = std::move(graph);
  } else {
    m.indices.copy_(indices);
  }
  m.cuda_graph->replay();
}

#else

bool cuda_graphs_built() { return false; }

struct TrainingStream::Impl {};
TrainingStream::TrainingStream(const torch::Device&) : impl_(std::make_unique<Impl>()) {}
TrainingStream::~TrainingStream() = default;

struct StepGraph::Impl {
  Step step;
  bool graph = false;
  int warmup = 0;
  int eager_steps = 0;
};

void StepGraph::run(const torch::Tensor& indices) {
  impl_->step(indices);
  ++impl_->eager_steps;
}

#endif

StepGraph::StepGraph(Step step, bool graph, int warmup_steps) : impl_(std::make_unique<Impl>()) {
  impl_->step = std::move(step);
  impl_->graph = graph && cuda_graphs_built();
  impl_->warmup = warmup_steps;
}

StepGraph::~StepGraph() = default;

bool StepGraph::captured() const {
#ifdef DDP_TRAINER_CUDA
  return impl_->cuda_graph != nullptr;
#else
  return false;
#endif
}

}  // namespace ddp::trainer
