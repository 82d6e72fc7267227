// Sealing what crosses a boundary another user of the cluster can reach (a TCPStore anyone may
// connect to, a UDP port anyone may send to): ChaCha20-Poly1305 (RFC 8439) from OpenSSL's libcrypto,
// and HMAC-SHA256 to turn a step's secret into one key per use. A sealed value is private and
// tamper-evident: without the key nobody reads it, changes it, or moves it to another name (the
// name goes into the associated data) undetected.
//
// Its own library (ddp_seal): libddp and the failure watch link it; the plugin, which only hands
// the secrets srun drew on to the step, and the rest of the contract do not.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace ddp::seal {

inline constexpr std::size_t kKeyBytes = 32;
inline constexpr std::size_t kNonceBytes = 12;
inline constexpr std::size_t kTagBytes = 16;
using Key = std::array<std::uint8_t, kKeyBytes>;
using Nonce = std::array<std::uint8_t, kNonceBytes>;

// HMAC-SHA256(secret, label): a key for one use of the secret, so that no two uses share a key
// (the store's values, the watch's datagrams, the names and ports derived from the secret).
Key derive(std::string_view secret, std::string_view label);

// `text` as lowercase hex digits, and back (nullopt for anything but an even count of them).
std::string to_hex(std::string_view bytes);
std::optional<std::string> from_hex(std::string_view hex);

// A nonce from the kernel's random numbers (getrandom); throws std::runtime_error without them.
Nonce random_nonce();

// One key's sealing and opening, with the cipher context made once (a flood of datagrams is
// opened on it, one after another). Not for two threads at once.
class Aead {
 public:
  explicit Aead(const Key& key);
  ~Aead();
  Aead(const Aead&) = delete;
  Aead& operator=(const Aead&) = delete;

  // ciphertext || tag of `plain` under `nonce`, with `aad` authenticated too. A nonce must never
  // seal two texts under one key. Throws std::runtime_error if libcrypto fails.
  std::string seal(const Nonce& nonce, std::string_view aad, std::string_view plain);
  // The plain text, or nullopt when `sealed` (ciphertext || tag) or `aad` is not what was sealed.
  std::optional<std::string> open(const Nonce& nonce, std::string_view aad, std::string_view sealed);

 private:
  struct Context;
  Key key_;
  std::unique_ptr<Context> ctx_;
};

}  // namespace ddp::seal
