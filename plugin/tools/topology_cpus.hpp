// How many CPUs a node has, read with hwloc from the live machine or an XML export.
#pragma once

#include <optional>
#include <string>

namespace ddp::tools {

// Throws std::runtime_error naming the file when it cannot be loaded.
unsigned topology_cpu_count(const std::optional<std::string>& xml_path);

}  // namespace ddp::tools
