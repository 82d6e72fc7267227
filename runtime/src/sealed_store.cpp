#include "sealed_store.hpp"

#include <openssl/crypto.h>

#include <cstring>
#include <utility>

#include "ddp/error.hpp"
#include "parse.hpp"
#include "torch_compat.hpp"

namespace ddp::detail {
namespace {

constexpr char kMagic[4] = {'D', 'D', 'S', '1'};
constexpr const char* kKeyLabel = "slurm-ddp store v1";
constexpr std::size_t kHeader = sizeof kMagic + seal::kNonceBytes;

std::string_view text_of(const std::vector<std::uint8_t>& v) {
  return {reinterpret_cast<const char*>(v.data()), v.size()};
}

std::vector<std::uint8_t> bytes_of(std::string_view s) { return {s.begin(), s.end()}; }

}  // namespace

SealedStore::SealedStore(c10::intrusive_ptr<c10d::Store> inner, const std::string& secret,
                         std::string generation, std::string where)
    : SealedStore(std::move(inner), seal::derive(secret, kKeyLabel), std::move(generation), std::move(where)) {}

SealedStore::SealedStore(c10::intrusive_ptr<c10d::Store> inner, const seal::Key& key, std::string generation,
                         std::string where)
    : c10d::Store(inner->getTimeout()),
      inner_(std::move(inner)),
      key_(key),
      generation_(std::move(generation)),
      where_(std::move(where)),
      aead_(key) {}

SealedStore::~SealedStore() { OPENSSL_cleanse(key_.data(), key_.size()); }

std::string SealedStore::aad(const std::string& key) const {
  std::string a = kKeyLabel;
  a += '\0';
  a += generation_;
  a += '\0';
  a += key;
  return a;
}

std::vector<std::uint8_t> SealedStore::sealed(const std::string& key, const std::vector<std::uint8_t>& value) {
  const seal::Nonce nonce = seal::random_nonce();
  std::string out(kMagic, sizeof kMagic);
  out.append(reinterpret_cast<const char*>(nonce.data()), nonce.size());
  std::lock_guard<std::mutex> hold(mu_);
  out += aead_.seal(nonce, aad(key), text_of(value));
  return bytes_of(out);
}

std::vector<std::uint8_t> SealedStore::opened(const std::string& key, const std::vector<std::uint8_t>& value) {
  const std::string_view v = text_of(value);
  const bool sealed = v.size() >= kHeader + seal::kTagBytes && std::memcmp(v.data(), kMagic, sizeof kMagic) == 0;
  std::optional<std::string> plain;
  if (sealed) {
    seal::Nonce nonce{};
    std::memcpy(nonce.data(), v.data() + sizeof kMagic, nonce.size());
    std::lock_guard<std::mutex> hold(mu_);
    plain = aead_.open(nonce, aad(key), v.substr(kHeader));
  }
  if (plain) return bytes_of(*plain);
  const std::string entry = "the rendezvous store at " + where_ + " (MASTER_ADDR:MASTER_PORT) holds an entry " +
                            plan::quoted(key) + " that no rank of this step wrote: ";
  const std::string outcome = ". The step ends on it; nothing is retried, requeued or excluded for it. Fix: ";
  // Sealed, but not with this step's key: the ranks of another step or job, whose MASTER_PORT
  // is this one's too (a derived port two heads on a node share), far likelier than another
  // user copying sealed values around.
  if (sealed)
    throw Error(entry + "it is sealed with another step's key or under another name, so another step's ranks "
                "use this MASTER_PORT too (two steps on one head node got the same port), or another "
                "process moved a sealed value (tampering)" + outcome +
                "run the job again, or give it a port of its own (--ddp-port); the administrator can "
                "give every step one (MpiParams=ports= in slurm.conf, docs/admins.md)");
  throw Error(entry + "it fails the step's authentication, so another process changed it (tampering)" + outcome +
              "run the job again; if it recurs, ask the administrator to find who connects to that port "
              "(docs/admins.md, \"Other users on the nodes\")");
}

void SealedStore::set(const std::string& key, const std::vector<std::uint8_t>& value) {
  inner_->set(key, sealed(key, value));
}

// c10d's rule, on the values as the ranks wrote them: `desired` goes in when the entry holds
// `expected` (or is absent and `expected` is empty); the entry's value comes back either way.
std::vector<std::uint8_t> SealedStore::compareSet(const std::string& key, const std::vector<std::uint8_t>& expected,
                                                  const std::vector<std::uint8_t>& desired) {
  const auto mine = sealed(key, desired);
  std::vector<std::uint8_t> current;
  if (!expected.empty()) {
    if (!inner_->check({key})) return expected;
    current = inner_->get(key);
    auto now = opened(key, current);
    if (now != expected) return now;
  }
  const auto now = inner_->compareSet(key, current, mine);
  return now == mine ? desired : opened(key, now);
}

std::vector<std::uint8_t> SealedStore::get(const std::string& key) { return opened(key, inner_->get(key)); }

std::int64_t SealedStore::add(const std::string& key, std::int64_t value) { return inner_->add(key, value); }

bool SealedStore::deleteKey(const std::string& key) { return inner_->deleteKey(key); }

bool SealedStore::check(const std::vector<std::string>& keys) { return inner_->check(keys); }

std::int64_t SealedStore::getNumKeys() { return inner_->getNumKeys(); }

void SealedStore::wait(const std::vector<std::string>& keys) { inner_->wait(keys, timeout_); }

void SealedStore::wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) {
  inner_->wait(keys, timeout);
}

void SealedStore::setTimeout(const std::chrono::milliseconds& timeout) {
  c10d::Store::setTimeout(timeout);
  inner_->setTimeout(timeout);
}

c10::intrusive_ptr<c10d::Store> SealedStore::clone() {
  return c10::make_intrusive<SealedStore>(compat::clone_store(*inner_), key_, generation_, where_);
}

c10::intrusive_ptr<c10d::Store> sealed_if_keyed(c10::intrusive_ptr<c10d::Store> store, const SealInput& in) {
  if (in.secret.empty()) return store;
  return c10::make_intrusive<SealedStore>(std::move(store), in.secret, in.generation, in.where);
}

}  // namespace ddp::detail
