// The store as a step's ranks use it when the plugin gave them the step's secret (DDP_STORE_KEY):
// rank 0's TCPStore takes anyone's connection and anyone's set(), since LibTorch's store has no
// authentication, and MASTER_PORT is computed from the public job id. So every value a rank puts
// there, libddp's own (arrivals, views, the verdict, the exchanges, the heartbeat's port and
// token) and Gloo's and NCCL's bootstrap keys alike (they are given this store), is sealed
// (seal.hpp) under a key derived from the secret, with the value's key and the restart generation
// as associated data: another user can neither read it, nor forge one, nor move a genuine value
// to another key or generation. What they still can do, being connected, is delete or overwrite
// an entry: a rank that then reads it ends the step with an error that names tampering (nothing
// is retried, requeued or excluded on it), and add()'s counters are the store's own, not sealed.
//
//   a sealed value:  "DDS1" | nonce (12 bytes, random) | ChaCha20-Poly1305(value) | tag (16)
//   associated data: "slurm-ddp store v1" NUL generation NUL key, the generation being the
//   restart count and the rendezvous' scope ("0/" for a program, "0/preflight" for ddp-preflight)
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include <torch/csrc/distributed/c10d/Store.hpp>

#include "seal.hpp"

namespace ddp::detail {

class SealedStore : public c10d::Store {
 public:
  // `secret`: the step's secret as the plugin gave it (its bytes); `generation`: the restart count
  // (TORCHELASTIC_RESTART_COUNT) and the rendezvous' scope; `where`: "ADDR:PORT", for messages.
  SealedStore(c10::intrusive_ptr<c10d::Store> inner, const std::string& secret, std::string generation,
              std::string where);
  // The same with the key already derived (a clone's).
  SealedStore(c10::intrusive_ptr<c10d::Store> inner, const seal::Key& key, std::string generation,
              std::string where);

  using c10d::Store::compareSet;  // the string overloads, as on every c10d store
  using c10d::Store::set;

  void set(const std::string& key, const std::vector<std::uint8_t>& value) override;
  std::vector<std::uint8_t> compareSet(const std::string& key, const std::vector<std::uint8_t>& expected,
                                       const std::vector<std::uint8_t>& desired) override;
  // Throws ddp::Error naming tampering when the entry is not sealed under this step's key.
  std::vector<std::uint8_t> get(const std::string& key) override;
  std::int64_t add(const std::string& key, std::int64_t value) override;
  bool deleteKey(const std::string& key) override;
  bool check(const std::vector<std::string>& keys) override;
  std::int64_t getNumKeys() override;
  void wait(const std::vector<std::string>& keys) override;
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override;
  void setTimeout(const std::chrono::milliseconds& timeout) override;
  ~SealedStore() override;
  // LibTorch 2.8 and later: a second connection, sealed alike. (No `override`: earlier base classes
  // have no clone().)
  virtual c10::intrusive_ptr<c10d::Store> clone();

  // The store underneath (a TCPStore, or the node leader's relay).
  c10d::Store& inner() { return *inner_; }

 private:
  std::vector<std::uint8_t> sealed(const std::string& key, const std::vector<std::uint8_t>& value);
  std::vector<std::uint8_t> opened(const std::string& key, const std::vector<std::uint8_t>& value);
  std::string aad(const std::string& key) const;

  c10::intrusive_ptr<c10d::Store> inner_;
  seal::Key key_;
  std::string generation_;
  std::string where_;
  std::mutex mu_;  // Gloo's and NCCL's threads share the store; one cipher context
  seal::Aead aead_;
};

// `store` sealed when the context carries the step's secret, else `store` itself.
struct SealInput {
  std::string secret;      // raw bytes; empty: nothing to seal with
  std::string generation;  // "0" unless the job was requeued
  std::string where;
};
c10::intrusive_ptr<c10d::Store> sealed_if_keyed(c10::intrusive_ptr<c10d::Store> store, const SealInput& in);

}  // namespace ddp::detail
