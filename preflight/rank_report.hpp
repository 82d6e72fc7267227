// What each rank found in its own checks (sent to the others as JSON, messages.hpp), and rank 0's
// summary of all of them: one row per check for the table.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "checks.hpp"

namespace ddp::preflight {

struct RankReport {
  int rank = 0;
  int node_rank = 0;
  std::string host;
  std::string gpu_bus_id;  // cuda:LOCAL_RANK's, when the GPU check found one
  std::vector<Check> checks;
};

// One row per check over every rank: failed when any rank failed (naming rank and node), else ok
// when any rank checked it, else skipped. Adds the check no rank can make alone: two ranks of a
// node that drive the same GPU.
std::vector<Check> summarise(const std::vector<RankReport>& reports);

// The nodes to leave out after the checks: those with a rank whose check failed, in NODE_RANK
// order, when some node passed every check; none when every node failed (a profile or job
// mistake, which leaving nodes out would not mend).
std::vector<std::string> nodes_that_failed(const std::vector<RankReport>& reports);

// Nodes by NODE_RANK, each with its lowest rank (the one that measures its links).
struct NodeLeader {
  std::string host;
  int rank = 0;
};
std::vector<NodeLeader> node_leaders(const std::vector<RankReport>& reports);

}  // namespace ddp::preflight
