// Whether a node's ranks reach rank 0's store through their LOCAL_RANK 0 (store_relay.hpp): one
// rule for every rank, read from what every rank of a job knows alike.
#pragma once

#include "ddp/context.hpp"

namespace ddp::detail {

// On unless DDP_STORE_RELAY=0, at every world size: relayed ranks meet as fast as direct ones at
// any size measured and rank 0 holds a fraction of the descriptors (on 2 cores, LibTorch 1.13: 64
// ranks 0.02 s and 63 descriptors against 0.04 s and 141; 512 ranks 0.21 s and 287 against 0.22 s
// and 1,037; 8,192 ranks 3.6 s and 4,127 against 17.9 s and 14,467), and the path a 1,000-node
// job takes is then the one every 2-node job proves. A node of one rank has nobody to relay for.
inline bool relayed(const Context& c) { return c.local_world_size > 1 && c.store_relay.value_or(true); }

}  // namespace ddp::detail
