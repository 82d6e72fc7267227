// Text in images: a built-in 5x7 bitmap font, so charts need no font files or libraries.
#pragma once

#include <cstdint>
#include <string_view>

#include "png.hpp"

namespace ddp::monitor {

inline constexpr unsigned kGlyphWidth = 5;
inline constexpr unsigned kGlyphHeight = 7;

// Pixels the text takes at `scale` (each glyph 5 wide, one column between glyphs).
unsigned text_width(std::string_view text, unsigned scale);

// Draws with the top-left corner at (x, y); characters outside ASCII 32..126 show as '?'.
// Returns the width drawn.
unsigned draw_text(Image& image, long x, long y, std::string_view text, std::uint8_t colour,
                   unsigned scale = 1);

}  // namespace ddp::monitor
