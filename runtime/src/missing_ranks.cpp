#include "missing_ranks.hpp"

#include <algorithm>
#include <vector>

#include "contract_tally.hpp"  // node_host_key
#include "parse.hpp"           // format_index_list
#include "rank_places.hpp"
#include "rendezvous.hpp"      // arrival_key, seconds_text, kArrivalsKey

namespace ddp::detail {
namespace {

bool all_arrived(c10d::Store& store, int first, int end) {
  std::vector<std::string> keys;
  keys.reserve(static_cast<std::size_t>(end - first));
  for (int r = first; r < end; ++r) keys.push_back(arrival_key(r));
  return store.check(keys);
}

// The first missing ranks in [first, end), in order, until `out` holds `limit`.
void find_missing(c10d::Store& store, int first, int end, std::size_t limit, std::vector<int>& out) {
  if (out.size() >= limit || first >= end || all_arrived(store, first, end)) return;
  if (end - first == 1) {
    out.push_back(first);
    return;
  }
  const int middle = first + (end - first) / 2;
  find_missing(store, first, middle, limit, out);
  find_missing(store, middle, end, limit, out);
}

std::string node_of(c10d::Store& store, const Context& c, int rank) {
  // Rank 0 runs on the first node, which a block layout fills: its LOCAL_WORLD_SIZE is the count.
  const int node = rank / std::max(1, c.local_world_size);
  const std::string key = node_host_key(node);
  if (store.check({key})) {
    const auto host = store.get(key);
    return std::string(host.begin(), host.end());
  }
  return "NODE_RANK " + std::to_string(node);  // no rank of that node arrived to name it
}

}  // namespace

std::string missing_report(c10d::Store& store, const Context& c, const std::string& where,
                           std::chrono::milliseconds timeout) {
  std::vector<int> missing;
  find_missing(store, 0, c.world_size, plan::kMaxNamedRanks, missing);
  const auto arrived = store.add(kArrivalsKey, 0);
  // Two tasks that claim one RANK count twice as arrived; the missing are at least those found.
  const std::size_t total = std::max<std::size_t>(
      missing.size(), arrived < c.world_size ? static_cast<std::size_t>(c.world_size - arrived) : 0);
  std::vector<unsigned> ranks;
  std::vector<plan::RankPlace> places;
  for (const int r : missing) {
    ranks.push_back(static_cast<unsigned>(r));
    places.push_back({static_cast<unsigned>(r), node_of(store, c, r)});
  }
  std::string named = plan::format_index_list(ranks);
  if (total > missing.size()) named += " and " + std::to_string(total - missing.size()) + " more";
  return "rank(s) " + named + " of " + std::to_string(c.world_size) +
         " never arrived at the rendezvous " + where + " within " + seconds_text(timeout) + " s (missing: " +
         plan::ranks_by_node(places, places.size()) + "; arrived: " + std::to_string(arrived) +
         " ranks). Check that every task started, and the job's output of the missing ones";
}

}  // namespace ddp::detail
