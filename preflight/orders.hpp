// What rank 0 tells each rank once it has read every rank's checks: whether the step goes on to
// measure, how many rounds of node pairs it runs (every rank meets at a barrier before each), and
// the links this rank measures. Each rank hears only its own orders (Rendezvous::scatter), so no
// rank reads what every other rank found: the exchange is O(R) in all, not R² (8,192 ranks).
#pragma once

#include <string>
#include <vector>

#include "rank_report.hpp"
#include "schedule.hpp"

namespace ddp::preflight {

// One link to measure in `round`, between the leaders of two nodes; rank_a records it.
struct PairJob {
  int round = 0;
  int rank_a = 0, rank_b = 0;
  std::string host_a, host_b;
};

struct RankOrders {
  bool measure = false;  // false: a check failed (rank 0 says which); every rank stops
  int rounds = 0;
  std::vector<PairJob> jobs;  // a node leader's pairs, in round order; empty on the other ranks
};

// Rank 0: the orders of each of `world_size` ranks, indexed by rank. `rounds` pairs indices of
// `nodes` (pair_rounds); with `measure` false every rank is told to stop.
std::vector<RankOrders> orders_for_ranks(const std::vector<NodeLeader>& nodes,
                                         const std::vector<std::vector<Pair>>& rounds, int world_size,
                                         bool measure);

}  // namespace ddp::preflight
