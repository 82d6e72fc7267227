#include "printable.hpp"

#include <cstdint>
#include <cstdio>

namespace ddp::plan {
namespace {

std::uint32_t code_point(std::string_view s, std::size_t i, std::size_t n) {
  const auto b = [&](std::size_t k) { return static_cast<std::uint32_t>(static_cast<unsigned char>(s[i + k])); };
  switch (n) {
    case 2: return (b(0) & 0x1f) << 6 | (b(1) & 0x3f);
    case 3: return (b(0) & 0x0f) << 12 | (b(1) & 0x3f) << 6 | (b(2) & 0x3f);
    case 4: return (b(0) & 0x07) << 18 | (b(1) & 0x3f) << 12 | (b(2) & 0x3f) << 6 | (b(3) & 0x3f);
    default: return b(0);
  }
}

// Code points a terminal or an editor acts on rather than shows.
bool control(std::uint32_t c) {
  return c < 0x20 || c == 0x7f || (c >= 0x80 && c <= 0x9f) || c == 0x2028 || c == 0x2029 ||
         (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069) || c == 0x200e || c == 0x200f ||
         c == 0x061c;
}

}  // namespace

std::size_t utf8_sequence_length(std::string_view s, std::size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  std::size_t n = 0;                   // continuation bytes
  unsigned char lo = 0x80, hi = 0xbf;  // the allowed range of the first of them
  if (c < 0x80) return 1;
  if (c >= 0xc2 && c <= 0xdf) {
    n = 1;
  } else if (c >= 0xe0 && c <= 0xef) {
    n = 2;
    if (c == 0xe0) lo = 0xa0;  // overlong
    if (c == 0xed) hi = 0x9f;  // UTF-16 surrogates
  } else if (c >= 0xf0 && c <= 0xf4) {
    n = 3;
    if (c == 0xf0) lo = 0x90;  // overlong
    if (c == 0xf4) hi = 0x8f;  // above U+10FFFF
  } else {
    return 0;
  }
  if (n >= s.size() - i) return 0;  // cut short
  for (std::size_t k = 1; k <= n; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if (b < (k == 1 ? lo : 0x80) || b > (k == 1 ? hi : 0xbf)) return 0;
  }
  return n + 1;
}

bool valid_utf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = utf8_sequence_length(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string printable(std::string_view text, std::size_t max_bytes) {
  const std::size_t end = text.size() < max_bytes ? text.size() : max_bytes;
  std::string out;
  out.reserve(end);
  char buf[16];
  for (std::size_t i = 0; i < end;) {
    const std::size_t n = utf8_sequence_length(text, i);
    if (n == 0 || i + n > end) {
      std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned char>(text[i]));
      out += buf;
      ++i;
      continue;
    }
    const std::uint32_t c = code_point(text, i, n);
    if (!control(c)) {
      out.append(text.substr(i, n));
    } else if (c < 0x80) {
      std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(c));
      out += buf;
    } else {
      std::snprintf(buf, sizeof buf, "\\u{%04x}", static_cast<unsigned>(c));
      out += buf;
    }
    i += n;
  }
  if (end < text.size()) out += "...";
  return out;
}

}  // namespace ddp::plan
