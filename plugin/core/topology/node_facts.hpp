// A node's topology as a small text file, so that steps after the first read what hwloc found
// instead of loading hwloc again (13-15 ms per step on an H100 node, 226-510 ms with its driver
// components). The file holds the Topology model (GPUs with bus ids, NICs with ports, cores and
// locality) plus the key it was made under; a file whose key differs from the node's present one
// is stale and never used.
#pragma once

#include <optional>
#include <string>

#include "topology.hpp"

namespace ddp::plan {

// Everything a topology depends on that can change without the plugin seeing it. Each field is
// cheap to read (a few small /proc and /sys files), so a step checks all of them.
struct NodeFactsKey {
  std::string source;       // "live", or "xml:PATH:size:mtime:inode" for a topology= file
  std::string boot_id;      // /proc/sys/kernel/random/boot_id: any reboot
  std::string cpus_online;  // /sys/devices/system/cpu/online: CPUs taken offline or brought back
  std::string pci_devices;  // digest of /sys/bus/pci/devices: a GPU or HCA gone or added
  std::string hwloc;        // the hwloc library that would load it
  std::string plugin;       // slurm-ddp's version: the format and the rules behind it
  bool operator==(const NodeFactsKey& other) const;
  // The first field that differs, as words for a log line ("boot id"); "" when equal.
  std::string first_difference(const NodeFactsKey& other) const;
};

// The key of this node now, for the live machine or the topology= file.
NodeFactsKey current_node_facts_key(const std::optional<std::string>& xml_path);

std::string encode_node_facts(const NodeFactsKey& key, const Topology& topology);

struct DecodedNodeFacts {
  NodeFactsKey key;
  Topology topology;
};
// Strict: throws PlanError naming the line for anything it did not write itself (a truncated,
// edited or foreign file), so a damaged file is rebuilt rather than half-believed.
DecodedNodeFacts decode_node_facts(const std::string& text);

}  // namespace ddp::plan
