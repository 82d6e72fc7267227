// Internal to the topology files: the hwloc walks behind load_topology(). Kept out of
// topology.hpp so that the planner and its tests never see hwloc's headers.
#pragma once

#include <hwloc.h>

#include <functional>
#include <string>
#include <vector>

#include "topology.hpp"

namespace ddp::plan::hwloc_walk {

// hwloc 3.0 turns osdev.type (one value) into osdev.types (a bit mask: an HCA is then
// NETWORK|OPENFABRICS, a CUDA GPU GPU|COPROC); this is the one place that knows.
enum class OsdevKind { Gpu, Coproc, Network, OpenFabrics };
bool osdev_is(hwloc_obj_t osdev, OsdevKind kind);

// Calls fn(name, value) for each info attribute (their storage differs between hwloc 2 and 3).
void for_each_info(hwloc_obj_t obj, const std::function<void(const char*, const char*)>& fn);
// The info value, or "" when absent.
std::string info(hwloc_obj_t obj, const char* name);
// obj->subtype, or "" when absent.
std::string subtype(hwloc_obj_t obj);

// The PCI device an OS device belongs to, nullptr for virtual or platform devices.
hwloc_obj_t pci_parent(hwloc_obj_t osdev);
// "0000:4e:00.0", lower-case hex, as Slurm, NVML and sysfs write it.
std::string busid(hwloc_obj_t pci);

CpuList cpus_of(hwloc_const_cpuset_t set);
Locality locality_of(hwloc_topology_t topology, hwloc_obj_t pci);

std::vector<Gpu> find_gpus(hwloc_topology_t topology);
std::vector<Nic> find_nics(hwloc_topology_t topology);

}  // namespace ddp::plan::hwloc_walk
