// Meeting every rank before any backend exists: the TCPStore at MASTER_ADDR:MASTER_PORT.
// ProcessGroup::create(context) meets and then builds NCCL or Gloo in one call; a program that
// wants to check something on every rank first (a preflight, a census of the nodes) meets here,
// exchanges short texts through the store, and builds the backend on this rendezvous only when
// every rank is fit, so that one rank's problem ends every rank with a message instead of a
// backend that hangs waiting for it.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "ddp/context.hpp"

namespace ddp {

namespace detail {
class PeerWatch;
}

class Rendezvous {
 public:
  // Every rank arrives, or the ones that did not are named; then rank 0 compares the contract
  // each rank brought (WORLD_SIZE, MASTER_ADDR:MASTER_PORT, RANK once each, LOCAL_RANK and
  // LOCAL_WORLD_SIZE per node) and every rank ends with the same message when they disagree.
  // Ignores SIGPIPE from here on, as Python does, unless the program set its own handler: a
  // write to a lost rank's socket is then an error that names it, not a silent death.
  // Throws ddp::Error.
  static std::shared_ptr<Rendezvous> meet(const Context& context,
                                          std::chrono::milliseconds timeout);
  ~Rendezvous();
  Rendezvous(const Rendezvous&) = delete;
  Rendezvous& operator=(const Rendezvous&) = delete;

  const Context& context() const { return context_; }
  // This rank's node name, as the others see it in messages.
  const std::string& host() const { return host_; }

  // The exchanges. Every rank calls them in the same order; ranks that do not within `timeout` are
  // named (the first few, with their nodes) in the ddp::Error the waiting ranks throw.
  //
  // Every rank's `text` on rank 0, indexed by rank; the other ranks get an empty vector at once.
  // Each rank makes a constant number of requests and rank 0 reads R texts: O(R) in all, the
  // exchange to use when only rank 0 needs to hear everyone.
  std::vector<std::string> gather(const std::string& text, std::chrono::milliseconds timeout);
  // Rank 0's `texts[r]` on rank r: rank 0 passes one text per rank, the others pass {}.
  std::string scatter(const std::vector<std::string>& texts, std::chrono::milliseconds timeout);
  // Every rank's `text` on every rank, indexed by rank: R reads on each rank, R² in all, so for
  // small worlds or texts only.
  std::vector<std::string> all_gather(const std::string& text, std::chrono::milliseconds timeout);
  // Rank 0's `text` on every rank (the others' argument is not used).
  std::string broadcast(const std::string& text, std::chrono::milliseconds timeout);

  // The last call on the rendezvous: rank 0, which serves the store, waits until every rank has
  // made it (at most `timeout`), so that no rank loses the store while it still reads from it.
  void finish(std::chrono::milliseconds timeout);

  struct Native;  // the LibTorch store, hidden from users of this header

 private:
  friend class ProcessGroup;
  friend class detail::PeerWatch;  // asks the store once, for rank 0's heartbeat port
  Rendezvous(const Context& context, std::string host, std::unique_ptr<Native> native);
  Context context_;
  std::string host_;
  std::unique_ptr<Native> native_;
  long long round_ = 0;  // how many exchanges so far: every rank counts the same
  int watches_ = 0;      // peer watches started on it: each finds rank 0's port under its own key
  std::chrono::milliseconds rank0_owes_{0};  // after a gather: how long rank 0 may still wait
};

}  // namespace ddp
