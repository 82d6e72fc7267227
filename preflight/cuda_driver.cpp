#include "cuda_driver.hpp"

#include <dlfcn.h>

#include <string>

namespace ddp::preflight {
namespace {

// The driver API's C ABI, stable since CUDA 4 (cuda.h): CUresult and CUdevice are ints.
using CuInit = int (*)(unsigned);
using CuDeviceGetCount = int (*)(int*);
using CuDeviceGet = int (*)(int*, int);
using CuDeviceGetPciBusId = int (*)(char*, int, int);
constexpr int kCudaErrorNoDevice = 100;

template <class F>
F symbol(void* lib, const char* name) {
  return reinterpret_cast<F>(dlsym(lib, name));
}

}  // namespace

CudaDevices query_cuda_devices(const char* library) {
  CudaDevices out;
  // Kept loaded: NCCL, later in this process, uses the same driver.
  void* lib = dlopen(library, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* why = dlerror();
    out.why_not = why ? why : std::string(library) + " cannot be loaded";
    return out;
  }
  const auto init = symbol<CuInit>(lib, "cuInit");
  const auto count = symbol<CuDeviceGetCount>(lib, "cuDeviceGetCount");
  const auto get = symbol<CuDeviceGet>(lib, "cuDeviceGet");
  const auto bus = symbol<CuDeviceGetPciBusId>(lib, "cuDeviceGetPCIBusId");
  if (!init || !count || !get || !bus) {
    out.why_not = std::string(library) + " lacks the driver API (cuInit, cuDeviceGetPCIBusId)";
    return out;
  }
  const int rc = init(0);
  out.loaded = true;
  if (rc == kCudaErrorNoDevice) return out;  // an answer: no device visible to this process
  int n = 0;
  if (rc != 0 || count(&n) != 0) {
    out.loaded = false;
    out.why_not = "cuInit failed with CUDA error " + std::to_string(rc);
    return out;
  }
  for (int i = 0; i < n; ++i) {
    int device = 0;
    char id[32] = {};
    if (get(&device, i) != 0 || bus(id, sizeof id, device) != 0) {
      out.bus_ids.push_back("unknown");
      continue;
    }
    out.bus_ids.push_back(id);
  }
  return out;
}

}  // namespace ddp::preflight
