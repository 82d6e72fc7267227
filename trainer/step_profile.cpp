#include "step_profile.hpp"

#include <cstdio>
#include <set>
#include <stdexcept>

#ifdef DDP_TRAINER_CUDA
#include <torch/csrc/autograd/profiler_kineto.h>
#endif

namespace ddp::trainer {

#ifdef DDP_TRAINER_CUDA

namespace {

namespace prof = torch::profiler::impl;
namespace autograd_prof = torch::autograd::profiler;

const prof::ProfilerConfig& config() {
  static const prof::ProfilerConfig c(prof::ProfilerState::KINETO);
  return c;
}

std::set<prof::ActivityType> activities(const torch::Device& device) {
  std::set<prof::ActivityType> a{prof::ActivityType::CPU};
  if (device.is_cuda()) a.insert(prof::ActivityType::CUDA);
  return a;
}

void wait_for(const torch::Device& device) {
  if (device.is_cuda()) torch::cuda::synchronize(device.index());
}

}  // namespace

bool step_profiler_built() { return true; }

StepProfiler::StepProfiler(std::string path, int64_t first, int64_t count,
                           const torch::Device& device)
    : path_(std::move(path)), first_(first), count_(count), device_(device) {
  if (!path_.empty()) autograd_prof::prepareProfiler(config(), activities(device_));
}

StepProfiler::~StepProfiler() {
  if (!running_) return;
  try {
    autograd_prof::disableProfiler();
  } catch (const std::exception&) {
  }
}

void StepProfiler::before_step(int64_t step) {
  if (path_.empty() || running_ || step != first_) return;
  wait_for(device_);
  autograd_prof::enableProfiler(config(), activities(device_));
  running_ = true;
}

void StepProfiler::after_step(int64_t step) {
  if (!running_ || step != first_ + count_ - 1) return;
  wait_for(device_);
  running_ = false;
  const auto result = autograd_prof::disableProfiler();
  result->save(path_);
  std::printf("Profile of steps %lld..%lld written to %s\n", static_cast<long long>(first_),
              static_cast<long long>(first_ + count_ - 1), path_.c_str());
  std::fflush(stdout);
}

#else

bool step_profiler_built() { return false; }

StepProfiler::StepProfiler(std::string path, int64_t first, int64_t count,
                           const torch::Device& device)
    : path_(std::move(path)), first_(first), count_(count), device_(device) {
  if (!path_.empty())
    throw std::invalid_argument(
        "--profile-trace needs a CUDA build of LibTorch (this build records no GPU kernels)");
}

StepProfiler::~StepProfiler() = default;
void StepProfiler::before_step(int64_t) {}
void StepProfiler::after_step(int64_t) {}

#endif

}  // namespace ddp::trainer
