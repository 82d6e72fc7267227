#include "nvml.hpp"

#include <dlfcn.h>

#include "error.hpp"

namespace ddp::monitor {

// NVML's C ABI (nvml.h), the part used here. Named, not anonymous: Nvml::Api, a class of the
// header's, has fields of these types.
namespace nvml_h {

using nvmlReturn_t = int;
using nvmlDevice_t = void*;
constexpr nvmlReturn_t NVML_SUCCESS = 0;
struct nvmlUtilization_t {
  unsigned int gpu;
  unsigned int memory;
};
struct nvmlMemory_t {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};

}  // namespace nvml_h

struct Nvml::Api {
  nvml_h::nvmlReturn_t (*init)();
  nvml_h::nvmlReturn_t (*shutdown)();
  const char* (*error_string)(nvml_h::nvmlReturn_t);
  nvml_h::nvmlReturn_t (*by_index)(unsigned int, nvml_h::nvmlDevice_t*);
  nvml_h::nvmlReturn_t (*by_bus_id)(const char*, nvml_h::nvmlDevice_t*);
  nvml_h::nvmlReturn_t (*name)(nvml_h::nvmlDevice_t, char*, unsigned int);
  nvml_h::nvmlReturn_t (*utilization)(nvml_h::nvmlDevice_t, nvml_h::nvmlUtilization_t*);
  nvml_h::nvmlReturn_t (*memory)(nvml_h::nvmlDevice_t, nvml_h::nvmlMemory_t*);
  nvml_h::nvmlReturn_t (*power)(nvml_h::nvmlDevice_t, unsigned int*);

  std::string words(nvml_h::nvmlReturn_t rc) const {
    const char* s = error_string ? error_string(rc) : nullptr;
    return s ? std::string(s) : "NVML error " + std::to_string(rc);
  }
};

namespace {

template <class F>
void bind(void* lib, const char* name, F& fn) {
  fn = reinterpret_cast<F>(dlsym(lib, name));
  if (!fn)
    throw plan::PlanError(std::string(kNvmlLibrary) + " has no " + name +
                          " (an NVIDIA driver older than 2015?)");
}

}  // namespace

std::unique_ptr<Nvml> Nvml::open() {
  void* lib = dlopen(kNvmlLibrary, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* why = dlerror();
    throw plan::PlanError(why ? why : "cannot load " + std::string(kNvmlLibrary));
  }
  auto api = std::make_unique<Api>();
  try {
    bind(lib, "nvmlInit_v2", api->init);
    bind(lib, "nvmlShutdown", api->shutdown);
    bind(lib, "nvmlErrorString", api->error_string);
    bind(lib, "nvmlDeviceGetHandleByIndex_v2", api->by_index);
    bind(lib, "nvmlDeviceGetHandleByPciBusId_v2", api->by_bus_id);
    bind(lib, "nvmlDeviceGetName", api->name);
    bind(lib, "nvmlDeviceGetUtilizationRates", api->utilization);
    bind(lib, "nvmlDeviceGetMemoryInfo", api->memory);
    bind(lib, "nvmlDeviceGetPowerUsage", api->power);
    const nvml_h::nvmlReturn_t rc = api->init();
    if (rc != nvml_h::NVML_SUCCESS) throw plan::PlanError("nvmlInit: " + api->words(rc));
  } catch (...) {
    dlclose(lib);
    throw;
  }
  return std::unique_ptr<Nvml>(new Nvml(lib, std::move(api)));
}

Nvml::Nvml(void* library, std::unique_ptr<Api> api) : library_(library), api_(std::move(api)) {}

Nvml::~Nvml() {
  api_->shutdown();
  dlclose(library_);
}

Nvml::Device Nvml::device(const GpuTarget& target) const {
  nvml_h::nvmlDevice_t dev = nullptr;
  const nvml_h::nvmlReturn_t rc = target.busid.empty() ? api_->by_index(target.index, &dev)
                                               : api_->by_bus_id(target.busid.c_str(), &dev);
  if (rc != nvml_h::NVML_SUCCESS)
    throw plan::PlanError("NVML does not know GPU " + std::to_string(target.index) +
                          (target.busid.empty() ? "" : " (" + target.busid + ")") + ": " +
                          api_->words(rc));
  return dev;
}

GpuInfo Nvml::info(Device dev, const GpuTarget& target) const {
  GpuInfo i;
  i.gpu = target.index;
  i.busid = target.busid;
  char name[96] = {};
  if (api_->name(dev, name, sizeof name - 1) == nvml_h::NVML_SUCCESS) i.name = name;
  nvml_h::nvmlMemory_t mem{};
  if (api_->memory(dev, &mem) == nvml_h::NVML_SUCCESS)
    i.mem_total_mib = static_cast<double>(mem.total) / (1024.0 * 1024.0);
  return i;
}

GpuSample Nvml::sample(Device dev, unsigned gpu) const {
  GpuSample s;
  s.gpu = gpu;
  nvml_h::nvmlUtilization_t util{};
  if (api_->utilization(dev, &util) == nvml_h::NVML_SUCCESS) s.util = util.gpu;
  nvml_h::nvmlMemory_t mem{};
  if (api_->memory(dev, &mem) == nvml_h::NVML_SUCCESS)
    s.mem_used_mib = static_cast<double>(mem.used) / (1024.0 * 1024.0);
  unsigned int milliwatts = 0;
  if (api_->power(dev, &milliwatts) == nvml_h::NVML_SUCCESS) s.power_w = milliwatts / 1000.0;
  return s;
}

}  // namespace ddp::monitor
