// A palette image and its PNG encoding (8-bit indexed colour, zlib's deflate), enough for
// ddp-report's charts without a graphics library.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ddp::monitor {

struct Rgb {
  std::uint8_t r = 0, g = 0, b = 0;
};

class Image {
 public:
  Image(unsigned width, unsigned height, std::vector<Rgb> palette, std::uint8_t background = 0);
  unsigned width() const { return width_; }
  unsigned height() const { return height_; }
  const std::vector<Rgb>& palette() const { return palette_; }
  std::uint8_t at(unsigned x, unsigned y) const { return pixels_[std::size_t{y} * width_ + x]; }
  // Drawing outside the image is clipped.
  void set(long x, long y, std::uint8_t colour);
  void fill(long x0, long y0, long x1, long y1, std::uint8_t colour);  // [x0, x1) x [y0, y1)

 private:
  unsigned width_, height_;
  std::vector<Rgb> palette_;
  std::vector<std::uint8_t> pixels_;
};

// The whole file: signature, IHDR, PLTE, IDAT, IEND. Throws ddp::plan::PlanError when zlib fails.
std::string encode_png(const Image& image);

}  // namespace ddp::monitor
