// The PNG encoder, checked by reading the file back with zlib alone: chunk CRCs, the header,
// the palette, and every pixel after inflating IDAT.
#include <gtest/gtest.h>
#include <zlib.h>

#include <map>

#include "png.hpp"

using namespace ddp::monitor;

namespace {

std::uint32_t be32(const std::string& s, std::size_t at) {
  return (std::uint32_t(std::uint8_t(s[at])) << 24) | (std::uint32_t(std::uint8_t(s[at + 1])) << 16) |
         (std::uint32_t(std::uint8_t(s[at + 2])) << 8) | std::uint32_t(std::uint8_t(s[at + 3]));
}

// Chunk type -> data (IDAT concatenated), checking every CRC and the order IHDR first, IEND last.
std::map<std::string, std::string> chunks(const std::string& png, std::vector<std::string>& order) {
  std::map<std::string, std::string> out;
  std::size_t pos = 8;
  while (pos + 12 <= png.size()) {
    const std::uint32_t n = be32(png, pos);
    const std::string type = png.substr(pos + 4, 4);
    const std::string body = png.substr(pos + 8, n);
    const std::string typed = type + body;
    EXPECT_EQ(be32(png, pos + 8 + n),
              crc32(0, reinterpret_cast<const Bytef*>(typed.data()), static_cast<uInt>(typed.size())))
        << type;
    out[type] += body;
    order.push_back(type);
    pos += 12 + n;
  }
  EXPECT_EQ(pos, png.size());
  return out;
}

}  // namespace

TEST(MonitorPng, APaletteImageSurvivesTheRoundTrip) {
  Image img(7, 3, {{255, 255, 255}, {10, 20, 30}, {200, 0, 0}});
  img.fill(1, 0, 4, 2, 1);
  img.set(6, 2, 2);
  img.set(-1, 0, 2);   // clipped
  img.fill(5, 1, 99, 99, 2);
  const std::string png = encode_png(img);
  ASSERT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  std::vector<std::string> order;
  const auto c = chunks(png, order);
  EXPECT_EQ(order, (std::vector<std::string>{"IHDR", "PLTE", "IDAT", "IEND"}));
  EXPECT_EQ(be32(c.at("IHDR"), 0), 7u);
  EXPECT_EQ(be32(c.at("IHDR"), 4), 3u);
  EXPECT_EQ(c.at("IHDR").substr(8), std::string("\x08\x03\x00\x00\x00", 5));
  EXPECT_EQ(c.at("PLTE"), std::string("\xff\xff\xff\x0a\x14\x1e\xc8\x00\x00", 9));
  std::string raw(3 * 8, '\0');
  uLongf size = raw.size();
  ASSERT_EQ(uncompress(reinterpret_cast<Bytef*>(raw.data()), &size,
                       reinterpret_cast<const Bytef*>(c.at("IDAT").data()), c.at("IDAT").size()),
            Z_OK);
  ASSERT_EQ(size, raw.size());
  const std::string expected =
      std::string("\0\0\1\1\1\0\0\0", 8) + std::string("\0\0\1\1\1\0\2\2", 8) +
      std::string("\0\0\0\0\0\0\2\2", 8);
  EXPECT_EQ(raw, expected);
}

TEST(MonitorPng, ImagesNeedASizeAndAPalette) {
  EXPECT_ANY_THROW(Image(0, 1, {{0, 0, 0}}));
  EXPECT_ANY_THROW(Image(1, 1, {}));
}
