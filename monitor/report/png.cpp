#include "png.hpp"

#include <zlib.h>

#include <algorithm>

#include "error.hpp"

namespace ddp::monitor {
namespace {

void put32(std::string& out, std::uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out += static_cast<char>((v >> shift) & 0xff);
}

// Length, type, data, and the CRC of type and data (PNG spec 5.3).
void chunk(std::string& out, const char* type, const std::string& data) {
  put32(out, static_cast<std::uint32_t>(data.size()));
  const std::string body = std::string(type, 4) + data;
  out += body;
  put32(out, static_cast<std::uint32_t>(
                 crc32(0, reinterpret_cast<const Bytef*>(body.data()), static_cast<uInt>(body.size()))));
}

}  // namespace

Image::Image(unsigned width, unsigned height, std::vector<Rgb> palette, std::uint8_t background)
    : width_(width),
      height_(height),
      palette_(std::move(palette)),
      pixels_(std::size_t{width} * height, background) {
  if (width == 0 || height == 0 || palette_.empty() || palette_.size() > 256)
    throw plan::PlanError("an image needs a size and 1..256 colours");
}

void Image::set(long x, long y, std::uint8_t colour) {
  if (x < 0 || y < 0 || x >= static_cast<long>(width_) || y >= static_cast<long>(height_)) return;
  pixels_[static_cast<std::size_t>(y) * width_ + static_cast<std::size_t>(x)] = colour;
}

void Image::fill(long x0, long y0, long x1, long y1, std::uint8_t colour) {
  x0 = std::max(x0, 0L);
  y0 = std::max(y0, 0L);
  x1 = std::min(x1, static_cast<long>(width_));
  y1 = std::min(y1, static_cast<long>(height_));
  for (long y = y0; y < y1; ++y)
    std::fill_n(pixels_.begin() + y * width_ + x0, std::max(0L, x1 - x0), colour);
}

std::string encode_png(const Image& image) {
  std::string out = "\x89PNG\r\n\x1a\n";
  std::string ihdr;
  put32(ihdr, image.width());
  put32(ihdr, image.height());
  ihdr += std::string("\x08\x03\x00\x00\x00", 5);  // 8 bits, indexed, deflate, no filter, no interlace
  chunk(out, "IHDR", ihdr);
  std::string plte;
  for (const Rgb& c : image.palette()) plte += {static_cast<char>(c.r), static_cast<char>(c.g), static_cast<char>(c.b)};
  chunk(out, "PLTE", plte);
  // Each scanline: filter type 0 (none), then its palette indices.
  std::string raw;
  raw.reserve(std::size_t{image.height()} * (image.width() + 1));
  for (unsigned y = 0; y < image.height(); ++y) {
    raw += '\0';
    for (unsigned x = 0; x < image.width(); ++x) raw += static_cast<char>(image.at(x, y));
  }
  uLongf size = compressBound(static_cast<uLong>(raw.size()));
  std::string packed(size, '\0');
  if (compress2(reinterpret_cast<Bytef*>(packed.data()), &size,
                reinterpret_cast<const Bytef*>(raw.data()), static_cast<uLong>(raw.size()),
                Z_BEST_COMPRESSION) != Z_OK)
    throw plan::PlanError("zlib could not compress the image");
  packed.resize(size);
  chunk(out, "IDAT", packed);
  chunk(out, "IEND", "");
  return out;
}

}  // namespace ddp::monitor
