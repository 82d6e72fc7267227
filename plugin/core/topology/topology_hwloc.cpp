#include <cstdio>

#include "topology_hwloc.hpp"

namespace ddp::plan::hwloc_walk {

bool osdev_is(hwloc_obj_t osdev, OsdevKind kind) {
  if (osdev == nullptr || osdev->type != HWLOC_OBJ_OS_DEVICE || osdev->attr == nullptr)
    return false;
#if HWLOC_API_VERSION >= 0x00030000
  hwloc_obj_osdev_types_t bit = 0;
  switch (kind) {
    case OsdevKind::Gpu: bit = HWLOC_OBJ_OSDEV_GPU; break;
    case OsdevKind::Coproc: bit = HWLOC_OBJ_OSDEV_COPROC; break;
    case OsdevKind::Network: bit = HWLOC_OBJ_OSDEV_NETWORK; break;
    case OsdevKind::OpenFabrics: bit = HWLOC_OBJ_OSDEV_OPENFABRICS; break;
  }
  return (osdev->attr->osdev.types & bit) != 0;
#else
  switch (kind) {
    case OsdevKind::Gpu: return osdev->attr->osdev.type == HWLOC_OBJ_OSDEV_GPU;
    case OsdevKind::Coproc: return osdev->attr->osdev.type == HWLOC_OBJ_OSDEV_COPROC;
    case OsdevKind::Network: return osdev->attr->osdev.type == HWLOC_OBJ_OSDEV_NETWORK;
    case OsdevKind::OpenFabrics: return osdev->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS;
  }
  return false;
#endif
}

void for_each_info(hwloc_obj_t obj, const std::function<void(const char*, const char*)>& fn) {
#if HWLOC_API_VERSION >= 0x00030000
  for (unsigned i = 0; i < obj->infos.count; ++i) {
    const auto& kv = obj->infos.array[i];
#else
  for (unsigned i = 0; i < obj->infos_count; ++i) {
    const auto& kv = obj->infos[i];
#endif
    if (kv.name != nullptr && kv.value != nullptr) fn(kv.name, kv.value);
  }
}

std::string info(hwloc_obj_t obj, const char* name) {
  const char* value = hwloc_obj_get_info_by_name(obj, name);
  return value ? value : "";
}

std::string subtype(hwloc_obj_t obj) { return obj->subtype ? obj->subtype : ""; }

hwloc_obj_t pci_parent(hwloc_obj_t osdev) {
  hwloc_obj_t p = osdev->parent;
  // Subdevices (LevelZero tiles, for one) are OS devices under OS devices; the PCI device is
  // above them all.
  while (p != nullptr && p->type == HWLOC_OBJ_OS_DEVICE) p = p->parent;
  return p != nullptr && p->type == HWLOC_OBJ_PCI_DEVICE ? p : nullptr;
}

std::string busid(hwloc_obj_t pci) {
  const auto& a = pci->attr->pcidev;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04x:%02x:%02x.%01x", static_cast<unsigned>(a.domain),
                static_cast<unsigned>(a.bus), static_cast<unsigned>(a.dev),
                static_cast<unsigned>(a.func));
  return buf;
}

CpuList cpus_of(hwloc_const_cpuset_t set) {
  CpuList out;
  // An infinite set (hwloc's "all CPUs, even future ones") has no list form; never seen from a
  // loaded topology, but iterating one would not end.
  if (set == nullptr || hwloc_bitmap_weight(set) < 0) return out;
  for (int i = hwloc_bitmap_first(set); i != -1; i = hwloc_bitmap_next(set, i))
    out.push_back(static_cast<unsigned>(i));
  return out;
}

}  // namespace ddp::plan::hwloc_walk
