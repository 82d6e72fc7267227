// The node facts file: written by root (slurmd at its start, or the first DDP step after the node
// changed), read by every later DDP step. A file is used only when it is safe (its directory
// passes trusted_dir.hpp's walk, and it is a regular file of root's with one name that no one else
// may write) and current (its key is the node's key now); anything else is reloaded with hwloc
// and, where this process may, replaced. A refused directory is said in --ddp-verbose's and
// slurmd's line, never fatal.
#pragma once

#include <optional>
#include <string>
#include <sys/types.h>

#include "node_facts.hpp"
#include "topology.hpp"

namespace ddp::plan {

struct NodeFactsStore {
  std::string dir;          // plugstack.conf node_facts_dir=; "" = no file, hwloc every step
  uid_t owner = 0;          // who must own the directory and the file (root; tests: themselves)
  std::string path() const { return dir + "/node-facts"; }
};

struct NodeTopology {
  Topology topology;
  bool from_file = false;  // read from the file, no hwloc load
  std::string how;         // one line for --ddp-verbose and slurmd's log
  double ms = 0;           // the time it took, checks included
};

// The node's topology for a step: from the file when it is safe and current, else loaded with
// hwloc (and the file replaced when `may_write`). Port states of InfiniBand/RoCE HCAs are read
// fresh from /sys for a live source either way: a link can go down without anything else
// changing. Throws PlanError when the topology cannot be loaded at all.
NodeTopology node_topology(const NodeFactsStore& store, const std::optional<std::string>& xml_path,
                           bool may_write);

// "0.06 ms", "14.2 ms": how --ddp-verbose and the logs show the plugin's times.
std::string ms_text(double ms);

// Loads with hwloc and replaces the file, whatever it holds (slurmd's start). Throws PlanError.
NodeTopology rebuild_node_facts(const NodeFactsStore& store, const std::optional<std::string>& xml_path);

}  // namespace ddp::plan
