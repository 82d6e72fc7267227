// The CUDA driver, loaded at run time (libcuda.so.1, as NCCL and PyTorch load it): the same
// ddp-preflight checks GPUs whether its LibTorch was built with CUDA or not, and on a node
// without a driver it says so instead of failing to start.
#pragma once

#include "checks.hpp"

namespace ddp::preflight {

// cuInit, then each device's PCI bus id, from `library` (the driver's soname; tests name a
// stand-in). Never throws.
CudaDevices query_cuda_devices(const char* library = "libcuda.so.1");

}  // namespace ddp::preflight
