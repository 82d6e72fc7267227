#include "contract_tally.hpp"

#include <string>

namespace ddp::detail {
namespace {

constexpr const char* kConflicts = "ddp/tally/conflicts";

// What every rank of one step shares: ranks under another key belong to another step.
std::string step_of(const RankView& v) { return std::to_string(v.world_size) + "@" + v.master; }

std::string complete_key(const RankView& v) { return "ddp/tally/complete/" + step_of(v); }

// A key only one task may count itself under; a second one is a conflict.
void claim(c10d::Store& store, const std::string& key) {
  if (store.add(key, 1) > 1) store.add(kConflicts, 1);
}

}  // namespace

std::string node_host_key(int node_rank) { return "ddp/host/" + std::to_string(node_rank); }

void tally_view(c10d::Store& store, const RankView& v) {
  claim(store, "ddp/tally/rank/" + std::to_string(v.rank));
  claim(store, "ddp/tally/local/" + std::to_string(v.node_rank) + "/" + std::to_string(v.local_rank));
  // A node is complete when LOCAL_WORLD_SIZE ranks with one host, one LOCAL_WORLD_SIZE and one
  // step counted themselves on it. With no conflict (local ranks unique per node, each below
  // LOCAL_WORLD_SIZE, as every rank checks its own), a node holds at most one complete group, so
  // complete nodes holding WORLD_SIZE ranks between them means every node is whole.
  const std::string group = "ddp/tally/node/" + step_of(v) + "/" + std::to_string(v.node_rank) +
                            "/" + std::to_string(v.local_world_size) + "/" + v.host;
  const auto count = store.add(group, 1);
  if (count == 1) {
    const std::string key = node_host_key(v.node_rank);
    store.set(key, std::vector<std::uint8_t>(v.host.begin(), v.host.end()));
  }
  if (count == v.local_world_size) store.add(complete_key(v), v.local_world_size);
}

bool tally_agrees(c10d::Store& store, const RankView& rank0) {
  return store.add(kConflicts, 0) == 0 && store.add(complete_key(rank0), 0) == rank0.world_size;
}

}  // namespace ddp::detail
