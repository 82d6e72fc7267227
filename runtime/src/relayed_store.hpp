// The store a rank holds when its node's leader relays (store_relay.hpp): every c10d::Store call
// becomes one request on a Unix socket to the leader, answered by rank 0's store through it. Rank
// 0 then serves the leader's few connections instead of one per rank.
//
// A leader that ends (its rendezvous failed, it crashed) takes the relay with it while its node's
// ranks may still wait, for the rendezvous' verdict say: they then reach rank 0's store directly
// and ask again, so that they end with rank 0's words, not with the relay's loss. Only an add()
// the leader may have passed on already is not asked again: it fails, naming the loss.
#pragma once

#include <chrono>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <torch/csrc/distributed/c10d/Store.hpp>

#include "store_relay_wire.hpp"

namespace ddp::detail {

class RelayedStore : public c10d::Store {
 public:
  // Connects to the relay under `name`, waiting until `deadline` for the leader to listen (every
  // rank of a node starts at once, the leader not first). `direct` makes a connection to rank 0's
  // store: the store returned when the leader never listens (rank 0 then names it among the
  // missing) or another user's program holds the name, and the one asked once the relay is lost.
  // Without it, those are ddp::Errors. `leader` names the leader in messages.
  using Direct = std::function<c10::intrusive_ptr<c10d::Store>()>;
  static c10::intrusive_ptr<c10d::Store> connect(const std::string& name, const std::string& leader,
                                                  std::chrono::milliseconds timeout,
                                                  relay::Clock::time_point deadline, Direct direct = {});
  RelayedStore(int fd, std::string name, std::string leader, std::chrono::milliseconds timeout, Direct direct);
  ~RelayedStore() override;

  using c10d::Store::compareSet;  // the string overloads, as on every c10d store
  using c10d::Store::set;

  void set(const std::string& key, const std::vector<std::uint8_t>& value) override;
  std::vector<std::uint8_t> compareSet(const std::string& key, const std::vector<std::uint8_t>& expected,
                                       const std::vector<std::uint8_t>& desired) override;
  // Waits for the key for the store's time-out, as a TCPStore does.
  std::vector<std::uint8_t> get(const std::string& key) override;
  std::int64_t add(const std::string& key, std::int64_t value) override;
  bool deleteKey(const std::string& key) override;
  bool check(const std::vector<std::string>& keys) override;
  std::int64_t getNumKeys() override;
  void wait(const std::vector<std::string>& keys) override;
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override;
  // LibTorch 2.8 and later ask a store for a copy a second thread may use: another connection.
  // (No `override`: the 1.13 and early 2.x base classes have no clone().)
  virtual c10::intrusive_ptr<c10d::Store> clone();

  // Whether the leader still relays (rather than this rank asking rank 0 directly): its answers
  // come from rank 0 through the connection it proved when it first reached rank 0.
  bool relaying();

 private:
  // The leader's reply; nullopt once the relay is lost (then ask `direct_store()`). A request the
  // leader may have passed on already throws instead, unless asking twice does no harm.
  std::optional<relay::Reply> call(const relay::Request& request, std::chrono::milliseconds answer_within,
                                   bool ask_again_if_lost = true);
  // Rank 0's store, reached directly once the relay is lost; throws when there is no way to.
  c10::intrusive_ptr<c10d::Store> direct_store();

  std::mutex mu_;  // one request at a time on the socket
  int fd_;
  std::string name_;
  std::string leader_;
  Direct direct_;
  bool lost_ = false;
  std::string lost_why_;
  c10::intrusive_ptr<c10d::Store> direct_store_;
};

}  // namespace ddp::detail
