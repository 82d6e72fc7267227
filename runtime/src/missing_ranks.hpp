// Rank 0's words for a rendezvous that timed out: which ranks never came and on which nodes, in a
// number of requests and bytes that does not grow with the world. Rank 0 says it once, in the
// store, and every other rank repeats it: no rank asks about every other rank.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <torch/csrc/distributed/c10d/Store.hpp>

#include "ddp/context.hpp"

namespace ddp::detail {

// The ranks named: the first plan::kMaxNamedRanks missing, found by halving the ranks with one
// multi-key check per half (a few dozen requests among 8,192 ranks); the node each would run on,
// by the launch layout (NODE_RANK = RANK / rank 0's LOCAL_WORLD_SIZE: spank_ddp and torchrun
// fill nodes in order) and the name a rank of that node left, or its NODE_RANK when none came; the
// others counted.
std::string missing_report(c10d::Store& store, const Context& c, const std::string& where,
                           std::chrono::milliseconds timeout);

// The same search for any per-rank key: the first `limit` ranks (in order) whose key_of(rank) is
// not in the store, with one multi-key check per half.
std::vector<int> first_absent(c10d::Store& store, int world_size,
                              const std::function<std::string(int)>& key_of, std::size_t limit);

// The same search through the caller's own check (`all_there(keys)`: every key is in the store),
// listing only the absent ranks `listed(rank)` accepts: those it turns down cost the search more
// requests, not a place in the list.
std::vector<int> first_absent(int world_size, const std::function<std::string(int)>& key_of, std::size_t limit,
                              const std::function<bool(const std::vector<std::string>&)>& all_there,
                              const std::function<bool(int)>& listed);

// How many absent ranks a message counts after the `named` ones a search found (it stops at
// `limit`), when `counted` of `world` ranks said they are there. The counts and the search are
// separate requests, and a rank that comes between them is counted by neither, or by both: a
// search that stopped short of its limit saw every absent rank, so nobody is left to count; one
// that reached it names the first, and the counts say how many more at least.
inline std::size_t absent_not_named(std::size_t named, std::size_t limit, std::int64_t world,
                                    std::int64_t counted) {
  if (named < limit || counted >= world) return 0;
  const auto absent = static_cast<std::size_t>(world - counted);
  return absent > named ? absent - named : 0;
}

// `ranks`, the first few of `total`, as messages name them: list "155-162 and 12 more", places
// "n19: ranks 155-159; NODE_RANK 20: ranks 160-162" (the node each would run on, as missing_report
// finds it).
struct NamedRanks {
  std::string list;
  std::string places;
};
NamedRanks name_ranks(c10d::Store& store, const Context& c, const std::vector<int>& ranks,
                      std::size_t total);

// The ranks whose key_of(rank) is absent, when `counted` ranks said they set theirs: the first
// kMaxNamedRanks found, the total at least world_size - counted.
NamedRanks name_absent(c10d::Store& store, const Context& c,
                       const std::function<std::string(int)>& key_of, std::int64_t counted);

}  // namespace ddp::detail
