#include <algorithm>
#include <iterator>
#include <map>

#include "parse.hpp"
#include "topology_hwloc.hpp"

namespace ddp::plan::hwloc_walk {
namespace {

constexpr unsigned kNvidia = 0x10de;
constexpr unsigned kAmd = 0x1002;

constexpr unsigned kClassVga = 0x0300;
constexpr unsigned kClass3d = 0x0302;
constexpr unsigned kClassDisplayOther = 0x0380;  // AMD Instinct MI50 ... MI250X
constexpr unsigned kClassAccelerator = 0x1200;   // AMD MI300A/X
constexpr unsigned kClassBridgeOther = 0x0680;   // NVSwitch

// ATI chips soldered onto older servers as the BMC's VGA (ES1000, RN50, Rage XL). They carry
// AMD's vendor id and class 0x0300, and the radeon driver even gives them a DRM card, so only
// the device id tells them apart from a Radeon that ROCm can use.
constexpr unsigned kAtiServerVga[] = {0x515e, 0x5969, 0x5159, 0x4752};

// The name users and tools use for the device wins: CUDA ordinal, NVML/ROCm SMI index. OpenCL
// and DRM names (card1, renderD128, controlD65) identify the device only to hwloc.
int name_rank(const std::string& name) {
  if (starts_with(name, "cuda")) return 0;
  if (starts_with(name, "nvml")) return 1;
  if (starts_with(name, "rsmi")) return 2;
  if (starts_with(name, "opencl")) return 3;
  if (starts_with(name, "card")) return 4;
  if (starts_with(name, "renderD")) return 5;
  return 6;
}

struct Seen {
  std::string name;
  int rank = 99;
};

// Only the GPUs NCCL (CUDA) and RCCL (ROCm) drive count. That also drops every BMC VGA with a
// DRM device (ASPEED 1a03, Matrox 102b, others) by vendor alone.
bool is_compute_gpu(hwloc_obj_t pci, bool has_gpu_osdev) {
  const auto& a = pci->attr->pcidev;
  if (a.vendor_id == kNvidia) {
    if (a.class_id == kClassBridgeOther) return false;
    return has_gpu_osdev || a.class_id == kClassVga || a.class_id == kClass3d;
  }
  if (a.vendor_id == kAmd) {
    if (a.class_id == kClassVga &&
        std::find(std::begin(kAtiServerVga), std::end(kAtiServerVga), a.device_id) !=
            std::end(kAtiServerVga))
      return false;
    return has_gpu_osdev || a.class_id == kClassVga || a.class_id == kClassDisplayOther ||
           a.class_id == kClassAccelerator;
  }
  return false;
}

}  // namespace

std::vector<Gpu> find_gpus(hwloc_topology_t topology) {
  // One PCI device has up to four OS devices (opencl0d0, cuda0, nvml0, card1): keep the best name.
  std::map<hwloc_obj_t, Seen> named;
  for (hwloc_obj_t os = hwloc_get_next_osdev(topology, nullptr); os != nullptr;
       os = hwloc_get_next_osdev(topology, os)) {
    if (!osdev_is(os, OsdevKind::Gpu) && !osdev_is(os, OsdevKind::Coproc)) continue;
    hwloc_obj_t pci = pci_parent(os);
    if (pci == nullptr || os->name == nullptr) continue;
    Seen& seen = named[pci];
    const int rank = name_rank(os->name);
    if (rank < seen.rank) seen = Seen{os->name, rank};
  }

  // Debian's hwloc has no CUDA/NVML/RSMI backends: on a live node GPUs are bare PCI devices, so
  // every PCI device is considered, not only those with OS devices.
  std::vector<Gpu> gpus;
  for (hwloc_obj_t pci = hwloc_get_next_pcidev(topology, nullptr); pci != nullptr;
       pci = hwloc_get_next_pcidev(topology, pci)) {
    const auto it = named.find(pci);
    if (!is_compute_gpu(pci, it != named.end())) continue;
    Gpu gpu;
    gpu.busid = busid(pci);
    if (it != named.end()) gpu.name = it->second.name;
    gpu.vendor_id = pci->attr->pcidev.vendor_id;
    gpu.device_id = pci->attr->pcidev.device_id;
    gpu.locality = locality_of(topology, pci);
    gpus.push_back(std::move(gpu));
  }
  std::sort(gpus.begin(), gpus.end(),
            [](const Gpu& a, const Gpu& b) { return a.busid < b.busid; });
  return gpus;
}

}  // namespace ddp::plan::hwloc_walk
