#include "siphash.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

namespace w = ddp::watch;

namespace {

// The reference vectors (github.com/veorq/SipHash, vectors.h: key 00..0f, message 00..LEN-1),
// as the bytes the reference code writes; a few lengths around the word boundaries.
struct Vector {
  std::size_t len;
  const char* sip64;
  const char* sip128;
};
const Vector kVectors[] = {
    {0, "310e0edd47db6f72", "a3817f04ba25a8e66df67214c7550293"},
    {1, "fd67dc93c539f874", "da87c1d86b99af44347659119b22fc45"},
    {7, "37d1018bf50002ab", "a1f1ebbed8dbc153c0b84aa61ff08239"},
    {8, "6224939a79f5f593", "3b62a9ba6258f5610f83e264f31497b4"},
    {15, "e545be4961ca29a1", "5493e99933b0a8117e08ec0f97cfc3d9"},
    {16, "db9bc2577fcc2a3f", "6ee2a4ca67b054bbfd3315bf85230577"},
    {63, "724506eb4c328a95", "5150d1772f50834a503e069a973fbd7c"},
};

template <std::size_t N>
std::string hex(const std::array<std::uint8_t, N>& bytes) {
  std::string s;
  char b[3];
  for (auto x : bytes) {
    std::snprintf(b, sizeof b, "%02x", x);
    s += b;
  }
  return s;
}

w::SipKey reference_key() {
  w::SipKey k{};
  for (std::size_t i = 0; i < k.size(); ++i) k[i] = static_cast<std::uint8_t>(i);
  return k;
}

}  // namespace

TEST(WatchSipHash, ThePapersExample) {
  // SipHash paper, appendix A: the 15-byte message 00..0e gives a129ca6149be45e5.
  std::uint8_t m[15];
  for (std::size_t i = 0; i < sizeof m; ++i) m[i] = static_cast<std::uint8_t>(i);
  const auto t = w::siphash24_64(reference_key(), m, sizeof m);
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = v << 8 | t[static_cast<std::size_t>(i)];
  EXPECT_EQ(v, 0xa129ca6149be45e5ULL);
}

TEST(WatchSipHash, TheReferenceVectors) {
  std::uint8_t m[64];
  for (std::size_t i = 0; i < sizeof m; ++i) m[i] = static_cast<std::uint8_t>(i);
  for (const Vector& v : kVectors) {
    EXPECT_EQ(hex(w::siphash24_64(reference_key(), m, v.len)), v.sip64) << "length " << v.len;
    EXPECT_EQ(hex(w::siphash24_128(reference_key(), m, v.len)), v.sip128) << "length " << v.len;
  }
}

TEST(WatchSipHash, TagsCompareWhole) {
  const std::uint8_t a[4] = {1, 2, 3, 4}, b[4] = {1, 2, 3, 5};
  EXPECT_TRUE(w::same_tag(a, a, 4));
  EXPECT_FALSE(w::same_tag(a, b, 4));
  EXPECT_TRUE(w::same_tag(a, b, 3));
}
