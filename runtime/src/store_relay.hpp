// A node's leader (LOCAL_RANK 0) relays its node's store requests to rank 0's store
// (DDP_STORE_RELAY), so that rank 0 serves a few connections per node instead of one per rank (two
// on LibTorch 1.13, whose server accepts one connection per pass over all of them: at 8,192 ranks
// that is 16,384 connections and seconds of accepts alone).
//
// The node's ranks, the leader among them, hold a RelayedStore (relayed_store.hpp) instead of a
// TCPStore. The leader serves them on threads of its own, through connections it opens to rank 0
// when first needed: one for every request that answers at once (set, add, check, a get of a key
// that is there), and one per distinct set of keys being waited for. Ranks that wait for the same
// keys (every rank of a node waits for the same verdict, the same NCCL id, the same scatter) share
// one wait at rank 0, and one read of the key they get.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include <torch/csrc/distributed/c10d/Store.hpp>

namespace ddp::detail {

class StoreRelay {
 public:
  // A new connection to rank 0's store, its first answer heard; throws when there is none.
  using Connect = std::function<c10::intrusive_ptr<c10d::Store>()>;

  // Listens under `name` at once (the node's ranks may ask before the leader itself reached rank
  // 0). Throws ddp::Error when the name is taken: another step's leader, or another user.
  static std::unique_ptr<StoreRelay> listen(const std::string& name, Connect connect);

  // Serves on until every rank it relays for has left, or none asked anything for `idle`, or for
  // `at_most` in all: a leader whose rendezvous failed stays while its ranks read the same failure.
  void linger(std::chrono::milliseconds idle, std::chrono::milliseconds at_most);

  // From now on answers every request with `words`, as libddp's own (a rank raises them as they
  // are): rank 0's failure, which its node's ranks then end with rather than ask a store that is
  // closing, or that was never rank 0's (another program holds the port).
  void answer_with(const std::string& words);

  // Stops listening and closes the node's connections; a thread still waiting at rank 0 for a
  // rank that left ends with its wait, on its own.
  ~StoreRelay();
  StoreRelay(const StoreRelay&) = delete;
  StoreRelay& operator=(const StoreRelay&) = delete;

  struct State;

 private:
  explicit StoreRelay(std::shared_ptr<State> state);
  std::shared_ptr<State> state_;
};

}  // namespace ddp::detail
