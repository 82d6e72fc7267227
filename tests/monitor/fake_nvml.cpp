// A scripted stand-in for NVIDIA's libnvidia-ml.so.1, for tests on machines without GPUs. It
// implements the NVML functions ddp-monitor calls, with the same C ABI, and is found the way
// the real one is: dlopen("libnvidia-ml.so.1") through the loader's search path (the tests put
// its directory in LD_LIBRARY_PATH). Its GPUs come from the file $DDP_FAKE_NVML_SCRIPT, one per
// line:
//
//   HOST INDEX BUS_ID NAME MEM_TOTAL_MIB UTIL[,UTIL...] MEM_USED_MIB POWER_W
//
// HOST is a host name or '*'; each call of nvmlDeviceGetUtilizationRates on a GPU returns the
// next of its UTIL values, round and round; POWER_W '-' makes power NOT_SUPPORTED; a '+' in NAME
// is a space, as real names have them ("NVIDIA H100 80GB HBM3"). Without the variable
// nvmlInit_v2 fails as on a node whose driver is not loaded.
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

constexpr int kSuccess = 0;
constexpr int kInvalidArgument = 2;
constexpr int kNotSupported = 3;
constexpr int kUninitialized = 1;
constexpr int kDriverNotLoaded = 9;
constexpr int kNotFound = 6;

struct Gpu {
  unsigned index = 0;
  std::string busid, name;
  unsigned long long total_mib = 0, used_mib = 0;
  std::vector<unsigned> util;
  std::size_t calls = 0;
  bool has_power = true;
  unsigned milliwatts = 0;
};

std::vector<Gpu>* gpus = nullptr;

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  // NVML writes an 8-digit domain ("00000000:3B:00.0"); compare the 4-digit form.
  if (s.size() == 16 && s.compare(0, 4, "0000") == 0) s.erase(0, 4);
  return s;
}

bool load() {
  const char* path = std::getenv("DDP_FAKE_NVML_SCRIPT");
  if (!path) return false;
  std::ifstream in(path);
  if (!in) return false;
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  auto* list = new std::vector<Gpu>;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream f(line);
    std::string who, util, power;
    Gpu g;
    if (!(f >> who) || who[0] == '#') continue;
    if (!(f >> g.index >> g.busid >> g.name >> g.total_mib >> util >> g.used_mib >> power)) continue;
    if (who != "*" && who != host) continue;
    for (char& c : g.name)
      if (c == '+') c = ' ';
    std::istringstream u(util);
    for (std::string v; std::getline(u, v, ',');) g.util.push_back(static_cast<unsigned>(std::stoul(v)));
    g.has_power = power != "-";
    if (g.has_power) g.milliwatts = static_cast<unsigned>(std::stod(power) * 1000);
    list->push_back(g);
  }
  gpus = list;
  return true;
}

Gpu* gpu_of(void* device) { return static_cast<Gpu*>(device); }

}  // namespace

extern "C" {

struct nvmlUtilization_t {
  unsigned int gpu;
  unsigned int memory;
};
struct nvmlMemory_t {
  unsigned long long total, free, used;
};

int nvmlInit_v2() { return gpus || load() ? kSuccess : kDriverNotLoaded; }

int nvmlShutdown() { return gpus ? kSuccess : kUninitialized; }

const char* nvmlErrorString(int rc) {
  switch (rc) {
    case kSuccess: return "Success";
    case kDriverNotLoaded: return "Driver Not Loaded";
    case kNotFound: return "Not Found";
    case kNotSupported: return "Not Supported";
    case kInvalidArgument: return "Invalid Argument";
    default: return "Unknown Error";
  }
}

int nvmlDeviceGetHandleByIndex_v2(unsigned int index, void** device) {
  if (!gpus) return kUninitialized;
  for (Gpu& g : *gpus)
    if (g.index == index) {
      *device = &g;
      return kSuccess;
    }
  return kInvalidArgument;
}

int nvmlDeviceGetHandleByPciBusId_v2(const char* busid, void** device) {
  if (!gpus) return kUninitialized;
  for (Gpu& g : *gpus)
    if (lower(g.busid) == lower(busid)) {
      *device = &g;
      return kSuccess;
    }
  return kNotFound;
}

int nvmlDeviceGetName(void* device, char* name, unsigned int length) {
  std::strncpy(name, gpu_of(device)->name.c_str(), length);
  if (length) name[length - 1] = '\0';
  return kSuccess;
}

int nvmlDeviceGetUtilizationRates(void* device, nvmlUtilization_t* util) {
  Gpu* g = gpu_of(device);
  util->gpu = g->util.empty() ? 0 : g->util[g->calls++ % g->util.size()];
  util->memory = util->gpu / 2;
  return kSuccess;
}

int nvmlDeviceGetMemoryInfo(void* device, nvmlMemory_t* mem) {
  const Gpu* g = gpu_of(device);
  mem->total = g->total_mib << 20;
  mem->used = g->used_mib << 20;
  mem->free = mem->total - mem->used;
  return kSuccess;
}

int nvmlDeviceGetPowerUsage(void* device, unsigned int* milliwatts) {
  const Gpu* g = gpu_of(device);
  if (!g->has_power) return kNotSupported;
  *milliwatts = g->milliwatts;
  return kSuccess;
}

}  // extern "C"
