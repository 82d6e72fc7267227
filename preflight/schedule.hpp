// Which node pairs measure their link, and when: in rounds of disjoint pairs, so that each round
// takes one pair's time however many nodes there are, and no node measures two links at once.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace ddp::preflight {

enum class PairMode { All, Ring, None };

// "all", "ring", "none", "auto" (all up to kAllPairsUpTo nodes, ring beyond); throws
// std::invalid_argument naming the value otherwise.
PairMode pair_mode(const std::string& text, int nodes);
inline constexpr int kAllPairsUpTo = 16;

using Pair = std::pair<int, int>;  // node indices, first < second

// All: every pair once, in nodes-1 rounds (nodes when odd), the round-robin tournament's
// circle method. Ring: each node with the next, (n-1, 0) closing it, in 2 or 3 rounds.
std::vector<std::vector<Pair>> pair_rounds(int nodes, PairMode mode);

}  // namespace ddp::preflight
