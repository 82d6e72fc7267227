// Ranks named by their nodes in messages that must not grow with the world: a time-out among
// 8,192 ranks names a few of the missing ones, compressed as Slurm writes host lists, and counts
// the rest ("n[17-19]: ranks 136-159; n21: rank 170; and 50 more").
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace ddp::plan {

// The most ranks a message names one by one; the others are counted.
inline constexpr std::size_t kMaxNamedRanks = 8;

struct RankPlace {
  unsigned rank = 0;
  std::string node;  // the node's name, or any text that says where the rank would be
};

// `named` sorted by rank, runs of consecutive ranks on one node or on consecutively numbered
// nodes ("n17", "n18": one prefix, the next number, the same zero padding) as one entry, entries
// separated by "; ", then "; and N more" when `total` counts more ranks than `named` holds.
std::string ranks_by_node(std::vector<RankPlace> named, std::size_t total);

}  // namespace ddp::plan
