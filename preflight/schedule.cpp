#include "schedule.hpp"

#include <algorithm>
#include <stdexcept>

namespace ddp::preflight {

PairMode pair_mode(const std::string& text, int nodes) {
  if (text == "all") return PairMode::All;
  if (text == "ring") return PairMode::Ring;
  if (text == "none") return PairMode::None;
  if (text == "auto") return nodes <= kAllPairsUpTo ? PairMode::All : PairMode::Ring;
  throw std::invalid_argument("--pairs='" + text + "' is not allowed; allowed: auto, all, ring, none");
}

std::vector<std::vector<Pair>> pair_rounds(int nodes, PairMode mode) {
  std::vector<std::vector<Pair>> rounds;
  if (nodes < 2 || mode == PairMode::None) return rounds;
  const auto ordered = [](int a, int b) { return a < b ? Pair{a, b} : Pair{b, a}; };
  if (mode == PairMode::Ring || nodes == 2) {
    if (nodes == 2) return {{{0, 1}}};
    std::vector<Pair> even, odd, last;
    for (int i = 0; i + 1 < nodes; ++i) (i % 2 == 0 ? even : odd).push_back({i, i + 1});
    // (n-1, 0) shares node 0 with the even round and, for odd n, node n-1 with it too.
    (nodes % 2 == 0 ? odd : last).push_back(ordered(nodes - 1, 0));
    for (auto* r : {&even, &odd, &last})
      if (!r->empty()) rounds.push_back(*r);
    return rounds;
  }
  // Circle method: node 0 stays, the others turn; with an odd count a bye (-1) joins.
  std::vector<int> circle;
  for (int i = 0; i < nodes; ++i) circle.push_back(i);
  if (nodes % 2) circle.push_back(-1);
  const int n = static_cast<int>(circle.size());
  for (int r = 0; r < n - 1; ++r) {
    std::vector<Pair> round;
    for (int i = 0; i < n / 2; ++i) {
      const int a = circle[i], b = circle[n - 1 - i];
      if (a >= 0 && b >= 0) round.push_back(ordered(a, b));
    }
    std::sort(round.begin(), round.end());
    rounds.push_back(round);
    std::rotate(circle.begin() + 1, circle.end() - 1, circle.end());
  }
  return rounds;
}

}  // namespace ddp::preflight
