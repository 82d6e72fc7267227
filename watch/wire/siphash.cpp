#include "siphash.hpp"

namespace ddp::watch {
namespace {

inline std::uint64_t rotl(std::uint64_t x, int b) { return (x << b) | (x >> (64 - b)); }

inline std::uint64_t load64(const std::uint8_t* p) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

inline void store64(std::uint8_t* p, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}

struct State {
  std::uint64_t v0, v1, v2, v3;

  void round() {
    v0 += v1; v1 = rotl(v1, 13); v1 ^= v0; v0 = rotl(v0, 32);
    v2 += v3; v3 = rotl(v3, 16); v3 ^= v2;
    v0 += v3; v3 = rotl(v3, 21); v3 ^= v0;
    v2 += v1; v1 = rotl(v1, 17); v1 ^= v2; v2 = rotl(v2, 32);
  }
  void compress(std::uint64_t m) {
    v3 ^= m;
    round();
    round();
    v0 ^= m;
  }
  std::uint64_t finish(std::uint8_t mark) {
    v2 ^= mark;
    for (int i = 0; i < 4; ++i) round();
    return v0 ^ v1 ^ v2 ^ v3;
  }
};

// Both outputs: the 128-bit one starts with v1 ^= 0xee and finalizes twice (0xee, then 0xdd).
void sip(const SipKey& key, const void* data, std::size_t size, std::uint8_t* out, bool wide) {
  const std::uint64_t k0 = load64(key.data()), k1 = load64(key.data() + 8);
  State s{k0 ^ 0x736f6d6570736575ULL, k1 ^ 0x646f72616e646f6dULL, k0 ^ 0x6c7967656e657261ULL,
          k1 ^ 0x7465646279746573ULL};
  if (wide) s.v1 ^= 0xee;
  const auto* p = static_cast<const std::uint8_t*>(data);
  const std::size_t whole = size - size % 8;
  for (std::size_t i = 0; i < whole; i += 8) s.compress(load64(p + i));
  std::uint64_t last = static_cast<std::uint64_t>(size & 0xff) << 56;
  for (std::size_t i = 0; i < size % 8; ++i) last |= static_cast<std::uint64_t>(p[whole + i]) << (8 * i);
  s.compress(last);
  store64(out, s.finish(wide ? 0xee : 0xff));
  if (!wide) return;
  s.v1 ^= 0xdd;
  for (int i = 0; i < 4; ++i) s.round();
  store64(out + 8, s.v0 ^ s.v1 ^ s.v2 ^ s.v3);
}

}  // namespace

Tag64 siphash24_64(const SipKey& key, const void* data, std::size_t size) {
  Tag64 t{};
  sip(key, data, size, t.data(), false);
  return t;
}

Tag128 siphash24_128(const SipKey& key, const void* data, std::size_t size) {
  Tag128 t{};
  sip(key, data, size, t.data(), true);
  return t;
}

bool same_tag(const std::uint8_t* a, const std::uint8_t* b, std::size_t size) {
  volatile std::uint8_t diff = 0;
  for (std::size_t i = 0; i < size; ++i) diff = static_cast<std::uint8_t>(diff | (a[i] ^ b[i]));
  return diff == 0;
}

}  // namespace ddp::watch
