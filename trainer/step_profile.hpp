// A trace of a few training steps for finding where a step's time goes: PyTorch's profiler
// (Kineto) records the host's operators and, on a GPU, every kernel with its duration, and writes a
// Chrome trace (chrome://tracing, Perfetto; bench/trace_summary.py sums it up by kind of kernel).
// The steps are bracketed by device synchronisation, so the trace holds exactly their work.
// GPU kernels are recorded in CUDA builds of LibTorch (DDP_TRAINER_CUDA); elsewhere the option
// says it is unavailable.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <string>

namespace ddp::trainer {

class StepProfiler {
 public:
  // Records steps [first, first + count) of the epoch it is told about; path empty: records
  // nothing.
  StepProfiler(std::string path, int64_t first, int64_t count, const torch::Device& device);
  ~StepProfiler();
  StepProfiler(const StepProfiler&) = delete;
  StepProfiler& operator=(const StepProfiler&) = delete;

  void before_step(int64_t step);
  void after_step(int64_t step);  // writes the trace after the last recorded step

 private:
  std::string path_;
  int64_t first_, count_;
  torch::Device device_;
  bool running_ = false;
};

// Whether this build can record GPU kernels.
bool step_profiler_built();

}  // namespace ddp::trainer
