#include <algorithm>
#include <cstdlib>

#include "topology_hwloc.hpp"

namespace ddp::plan {
namespace hwloc_walk {
namespace {

bool is_pci_to_pci_bridge(hwloc_obj_t obj) {
  return obj != nullptr && obj->type == HWLOC_OBJ_BRIDGE &&
         obj->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_PCI;
}

// The ancestor may be a Package, or below one (NUMA group, L3 on EPYC), or above one (a Group
// that holds exactly one package): in every case the package is the one that holds all its CPUs.
int package_of(hwloc_topology_t topology, hwloc_obj_t ancestor) {
  for (hwloc_obj_t o = ancestor; o != nullptr; o = o->parent)
    if (o->type == HWLOC_OBJ_PACKAGE) return static_cast<int>(o->os_index);
  if (ancestor->cpuset == nullptr || hwloc_bitmap_iszero(ancestor->cpuset)) return -1;
  hwloc_obj_t package = nullptr;
  while ((package = hwloc_get_next_obj_by_type(topology, HWLOC_OBJ_PACKAGE, package)) != nullptr)
    if (hwloc_bitmap_isincluded(ancestor->cpuset, package->cpuset))
      return static_cast<int>(package->os_index);
  return -1;
}

}  // namespace

Locality locality_of(hwloc_topology_t topology, hwloc_obj_t pci) {
  Locality loc;
  // NCCL walks the device's sysfs path upwards in pairs (downstream port, then the switch's
  // upstream port) and makes each upstream port one switch, stopping at the host bridge. In
  // hwloc both ports are PCI-to-PCI bridges; a root port's parent is the host bridge, so a
  // device on a root port has no switch at all.
  hwloc_obj_t p = pci->parent;
  while (is_pci_to_pci_bridge(p) && is_pci_to_pci_bridge(p->parent)) {
    loc.switches.push_back(static_cast<unsigned long long>(p->parent->gp_index));
    p = p->parent->parent;
  }
  hwloc_obj_t ancestor = hwloc_get_non_io_ancestor_obj(topology, pci);
  if (ancestor == nullptr) return loc;
  if (ancestor->nodeset != nullptr) {
    char* text = nullptr;
    if (hwloc_bitmap_list_asprintf(&text, ancestor->nodeset) >= 0 && text != nullptr)
      loc.numa = text;
    std::free(text);
  }
  loc.package = package_of(topology, ancestor);
  loc.cpus = cpus_of(ancestor->cpuset);
  return loc;
}

}  // namespace hwloc_walk

const char* path_type_name(PathType type) {
  switch (type) {
    case PathType::PIX: return "PIX";
    case PathType::PXB: return "PXB";
    case PathType::PHB: return "PHB";
    case PathType::SYS: return "SYS";
  }
  return "SYS";
}

PathType path_between(const Locality& a, const Locality& b) {
  // Two devices on root ports have no switch; that is not "the same switch".
  if (!a.switches.empty() && !b.switches.empty() && a.switches.front() == b.switches.front())
    return PathType::PIX;
  for (const auto sw : a.switches)
    if (std::find(b.switches.begin(), b.switches.end(), sw) != b.switches.end())
      return PathType::PXB;
  // NCCL's CPU node is the NUMA node: another SNC domain of the same package is already SYS.
  if (!a.numa.empty() && a.numa == b.numa) return PathType::PHB;
  return PathType::SYS;
}

}  // namespace ddp::plan
