#include "missing_ranks.hpp"

#include <algorithm>
#include <vector>

#include "contract_tally.hpp"  // node_host_key
#include "parse.hpp"           // format_index_list
#include "rank_places.hpp"
#include "rendezvous.hpp"      // arrival_key, seconds_text, kArrivalsKey

namespace ddp::detail {
namespace {

using KeyOf = std::function<std::string(int)>;
using AllThere = std::function<bool(const std::vector<std::string>&)>;

bool all_present(const AllThere& all_there, const KeyOf& key_of, int first, int end) {
  std::vector<std::string> keys;
  keys.reserve(static_cast<std::size_t>(end - first));
  for (int r = first; r < end; ++r) keys.push_back(key_of(r));
  return all_there(keys);
}

// The first absent ranks in [first, end), in order, until `out` holds `limit`.
void find_absent(const AllThere& all_there, const KeyOf& key_of, const std::function<bool(int)>& listed,
                 int first, int end, std::size_t limit, std::vector<int>& out) {
  if (out.size() >= limit || first >= end || all_present(all_there, key_of, first, end)) return;
  if (end - first == 1) {
    if (listed(first)) out.push_back(first);
    return;
  }
  const int middle = first + (end - first) / 2;
  find_absent(all_there, key_of, listed, first, middle, limit, out);
  find_absent(all_there, key_of, listed, middle, end, limit, out);
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

std::vector<int> first_absent(int world_size, const KeyOf& key_of, std::size_t limit, const AllThere& all_there,
                              const std::function<bool(int)>& listed) {
  std::vector<int> out;
  find_absent(all_there, key_of, listed, 0, world_size, limit, out);
  return out;
}

std::vector<int> first_absent(c10d::Store& store, int world_size, const KeyOf& key_of,
                              std::size_t limit) {
  return first_absent(
      world_size, key_of, limit, [&](const std::vector<std::string>& keys) { return store.check(keys); },
      [](int) { return true; });
}

NamedRanks name_ranks(c10d::Store& store, const Context& c, const std::vector<int>& ranks,
                      std::size_t total) {
  std::vector<unsigned> numbers;
  std::vector<plan::RankPlace> places;
  for (const int r : ranks) {
    numbers.push_back(static_cast<unsigned>(r));
    places.push_back({static_cast<unsigned>(r), node_of(store, c, r)});
  }
  NamedRanks out{plan::format_index_list(numbers), plan::ranks_by_node(places, places.size())};
  if (total > ranks.size()) out.list += " and " + std::to_string(total - ranks.size()) + " more";
  return out;
}

NamedRanks name_absent(c10d::Store& store, const Context& c, const KeyOf& key_of, std::int64_t counted) {
  const auto absent = first_absent(store, c.world_size, key_of, plan::kMaxNamedRanks);
  NamedRanks named = name_ranks(
      store, c, absent, absent.size() + absent_not_named(absent.size(), plan::kMaxNamedRanks, c.world_size, counted));
  // Every key there, yet not every rank counted: the last one ended between its two requests.
  if (absent.empty()) named = {"(none absent now)", "every rank's key is there now"};
  return named;
}

std::string missing_report(c10d::Store& store, const Context& c, const std::string& where,
                           std::chrono::milliseconds timeout) {
  const auto arrived = store.add(kArrivalsKey, 0);
  const auto named = name_absent(store, c, arrival_key, arrived);
  return "rank(s) " + named.list + " of " + std::to_string(c.world_size) +
         " never arrived at the rendezvous " + where + " within " + seconds_text(timeout) +
         " s (missing: " + named.places + "; arrived: " + std::to_string(arrived) +
         " ranks). Check that every task started, and the job's output of the missing ones";
}

}  // namespace ddp::detail
