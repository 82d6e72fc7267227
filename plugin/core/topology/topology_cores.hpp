// Internal to the topology files: the hwloc walk that lists a node's cores for Topology::cores.
#pragma once

#include <hwloc.h>

#include <vector>

#include "topology.hpp"

namespace ddp::plan::hwloc_walk {

// Cores in tree order with their PUs; empty when some CPU of the machine belongs to no listed
// core (hwloc drops the cores outside the loading process's cpuset unless told otherwise).
std::vector<CpuList> find_cores(hwloc_topology_t topology);

}  // namespace ddp::plan::hwloc_walk
