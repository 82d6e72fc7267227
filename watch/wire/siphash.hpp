// SipHash-2-4 (Aumasson and Bernstein, "SipHash: a fast short-input PRF", 2012), with the 64-bit
// output of the paper and the 128-bit output of the reference code (github.com/veorq/SipHash).
// The failure watch authenticates its datagrams with the 128-bit form (datagram.hpp): a keyed MAC
// small enough to own, with no library to link into the plugin's helpers.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace ddp::watch {

using SipKey = std::array<std::uint8_t, 16>;
using Tag64 = std::array<std::uint8_t, 8>;
using Tag128 = std::array<std::uint8_t, 16>;

// The tags as the reference code writes them: little-endian words.
Tag64 siphash24_64(const SipKey& key, const void* data, std::size_t size);
Tag128 siphash24_128(const SipKey& key, const void* data, std::size_t size);

// Whether two tags are equal, in a time that does not depend on where they differ.
bool same_tag(const std::uint8_t* a, const std::uint8_t* b, std::size_t size);

}  // namespace ddp::watch
