// "0-3,8,10-11" for the ranks of a node, as messages name them: short for the usual block of a
// node's ranks, and still right for a cyclic distribution.
#pragma once

#include <string>
#include <vector>

namespace ddp::watch {

std::string rank_ranges(std::vector<unsigned> ranks);

}  // namespace ddp::watch
