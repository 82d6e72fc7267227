// What each rank believes the contract is, as it brings it to the rendezvous. Each rank checks
// its own variables (context.cpp); only together can they show a launch that gave the tasks of
// one step different worlds: a WORLD_SIZE or MASTER_PORT that differs, a RANK two tasks claim,
// local ranks that do not add up on a node. Rank 0 compares every rank's view before any backend
// starts, which would otherwise hang or fail with words that name no variable.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ddp/context.hpp"

namespace ddp::detail {

struct RankView {
  int rank = 0, world_size = 1, local_rank = 0, local_world_size = 1, node_rank = 0;
  std::string master;  // "addr:port"
  std::string host;
};

RankView view_of(const Context& context, const std::string& host);

// One line, for the rendezvous store: "rank=0 world=4 local=0/2 node=0 master=n1:24567 host=n1".
std::string encode_view(const RankView& view);
// nullopt for text encode_view did not write.
std::optional<RankView> decode_view(const std::string& text);

// What the views disagree on, in words that name the ranks, their nodes and the variables, or
// nothing when they form one step: the same WORLD_SIZE and MASTER_ADDR:MASTER_PORT everywhere,
// ranks 0..WORLD_SIZE-1 once each, and per node one NODE_RANK, one LOCAL_WORLD_SIZE equal to
// its number of ranks and local ranks 0..LOCAL_WORLD_SIZE-1 once each. `views` holds every rank
// that arrived, in any order; the first disagreements found are named, not all of them.
std::optional<std::string> contract_disagreement(const std::vector<RankView>& views);

// The part a rank checks itself against rank 0's view: the same WORLD_SIZE and master.
std::optional<std::string> step_difference(const RankView& rank0, const RankView& mine);

}  // namespace ddp::detail
