#include "orders.hpp"

namespace ddp::preflight {

std::vector<RankOrders> orders_for_ranks(const std::vector<NodeLeader>& nodes,
                                         const std::vector<std::vector<Pair>>& rounds, int world_size,
                                         bool measure) {
  std::vector<RankOrders> out(static_cast<std::size_t>(world_size));
  for (RankOrders& o : out) {
    o.measure = measure;
    o.rounds = measure ? static_cast<int>(rounds.size()) : 0;
  }
  if (!measure) return out;
  for (std::size_t r = 0; r < rounds.size(); ++r)
    for (const auto& [a, b] : rounds[r]) {
      const NodeLeader& na = nodes.at(static_cast<std::size_t>(a));
      const NodeLeader& nb = nodes.at(static_cast<std::size_t>(b));
      const PairJob job{static_cast<int>(r), na.rank, nb.rank, na.host, nb.host};
      out.at(static_cast<std::size_t>(na.rank)).jobs.push_back(job);
      out.at(static_cast<std::size_t>(nb.rank)).jobs.push_back(job);
    }
  return out;
}

}  // namespace ddp::preflight
