#include "topology_cores.hpp"

#include "topology_hwloc.hpp"

namespace ddp::plan::hwloc_walk {

std::vector<CpuList> find_cores(hwloc_topology_t topology) {
  std::vector<CpuList> cores;
  // Logical indices run in tree order: package by package, as slurmd's abstract CPU numbering
  // and so Slurm's core ids do.
  const int count = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_CORE);
  hwloc_bitmap_t covered = hwloc_bitmap_alloc();
  for (int i = 0; i < count; ++i) {
    const hwloc_obj_t core = hwloc_get_obj_by_type(topology, HWLOC_OBJ_CORE, static_cast<unsigned>(i));
    if (core == nullptr || core->cpuset == nullptr) continue;
    cores.push_back(cpus_of(core->cpuset));
    hwloc_bitmap_or(covered, covered, core->cpuset);
  }
  // Slurm numbers every core of the machine; the complete cpuset still holds the CPUs whose cores
  // hwloc removed (disallowed by a cpuset), and a gap would shift every core id after it.
  const hwloc_const_cpuset_t all = hwloc_topology_get_complete_cpuset(topology);
  const bool whole = all != nullptr && hwloc_bitmap_isincluded(all, covered);
  hwloc_bitmap_free(covered);
  if (!whole) cores.clear();
  return cores;
}

}  // namespace ddp::plan::hwloc_walk
