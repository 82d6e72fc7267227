// NVML, loaded when the sampler starts: dlopen("libnvidia-ml.so.1") through the dynamic loader's
// search path (the driver's ld.so.conf entry, or LD_LIBRARY_PATH), exactly as CUDA programs find
// it. Nothing links it, so the sampler runs on nodes without GPUs or drivers. Only the handful of
// NVML functions below are used, declared here by their stable C ABI.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "record.hpp"
#include "sampler_args.hpp"

namespace ddp::monitor {

inline constexpr const char* kNvmlLibrary = "libnvidia-ml.so.1";

class Nvml {
 public:
  // Throws ddp::plan::PlanError with the loader's or NVML's own words.
  static std::unique_ptr<Nvml> open();
  ~Nvml();
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  using Device = void*;
  // By bus id when the target has one, else by NVML's index. Throws PlanError.
  Device device(const GpuTarget& target) const;
  GpuInfo info(Device device, const GpuTarget& target) const;
  // Readings NVML cannot give (NOT_SUPPORTED, e.g. power on some boards) stay unset.
  GpuSample sample(Device device, unsigned gpu) const;

 private:
  struct Api;
  Nvml(void* library, std::unique_ptr<Api> api);
  void* library_;
  std::unique_ptr<Api> api_;
};

}  // namespace ddp::monitor
