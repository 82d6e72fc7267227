// Rank 0's comparison of every rank's contract without reading every rank's view. Reading R views
// one after another costs R round trips through a store that serves R connections; instead each
// rank, as it arrives, counts itself under keys that name what must be unique or shared (its RANK,
// its node's LOCAL_RANK, its node's host and LOCAL_WORLD_SIZE under the step's WORLD_SIZE and
// master), and rank 0 reads two counters. Only when they show a problem does rank 0 read the
// views, to name it (contract_disagreement); a launch that agrees costs each rank a constant number
// of requests and rank 0 two more.
#pragma once

#include <torch/csrc/distributed/c10d/Store.hpp>

#include "contract_views.hpp"

namespace ddp::detail {

// This rank's counts. Every rank calls it once, before it counts itself as arrived.
void tally_view(c10d::Store& store, const RankView& mine);

// Whether the `rank0.world_size` ranks that arrived form one step with rank 0 (the checks of
// contract_disagreement), judged from the tallies of ranks that finished tally_view. False means
// that some check may fail: read the views to find out which.
bool tally_agrees(c10d::Store& store, const RankView& rank0);

// The store key that holds the name of the node NODE_RANK=`node_rank`, once one of its ranks
// arrived: the time-out report names missing ranks' nodes with it.
std::string node_host_key(int node_rank);

}  // namespace ddp::detail
