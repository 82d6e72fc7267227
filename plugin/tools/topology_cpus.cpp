#include "topology_cpus.hpp"

#include <hwloc.h>

#include <memory>
#include <stdexcept>

namespace ddp::tools {

unsigned topology_cpu_count(const std::optional<std::string>& xml_path) {
  hwloc_topology_t raw = nullptr;
  if (hwloc_topology_init(&raw) != 0) throw std::runtime_error("hwloc: cannot initialise");
  std::unique_ptr<hwloc_topology, decltype(&hwloc_topology_destroy)> topo(raw,
                                                                           hwloc_topology_destroy);
  if (xml_path && hwloc_topology_set_xml(raw, xml_path->c_str()) != 0)
    throw std::runtime_error("--topology " + *xml_path +
                             ": not a readable hwloc XML file (export one with "
                             "`lstopo --of xml FILE` on the node)");
  if (hwloc_topology_load(raw) != 0)
    throw std::runtime_error("hwloc: cannot load the topology" +
                             (xml_path ? " from " + *xml_path : std::string()));
  const int n = hwloc_get_nbobjs_by_type(raw, HWLOC_OBJ_PU);
  if (n <= 0) throw std::runtime_error("hwloc: the topology has no CPUs");
  return static_cast<unsigned>(n);
}

}  // namespace ddp::tools
