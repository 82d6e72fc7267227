// slurmd (its own context, once at the daemon's start): the node facts file, so that even the
// first step reads the topology instead of loading hwloc in slurmstepd.
#include <string>

#include "plugin_state.hpp"
#include "spank_api.hpp"

namespace ddp::spank {

plan::NodeFactsStore node_facts_store(const plan::PlugstackConfig& config) {
  return plan::NodeFactsStore{config.node_facts_dir, 0};
}

void slurmd_started() {
  const auto& s = state();
  // A plugstack.conf error is reported by every DDP step; the node itself keeps running.
  if (s.config_error) {
    log_error(*s.config_error);
    return;
  }
  if (s.config.node_facts_dir.empty()) return;
  try {
    const auto node = plan::rebuild_node_facts(node_facts_store(s.config), s.config.topology_xml);
    log_info("node topology " + node.how);
  } catch (const std::exception& e) {
    log_error(std::string("cannot load the node topology at slurmd's start (steps will try again): ") +
              e.what());
  }
}

}  // namespace ddp::spank
