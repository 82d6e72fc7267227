// The utilisation chart: one band per GPU filled to its reading, idle GPUs in their own colour,
// labels drawn with the built-in font.
#include <gtest/gtest.h>

#include "error.hpp"
#include "font.hpp"
#include "gpu_chart.hpp"

using namespace ddp::monitor;

namespace {

// Pixels of colour `c` in the column x between rows y0 and y1.
unsigned count(const Image& img, unsigned x, unsigned y0, unsigned y1, std::uint8_t c) {
  unsigned n = 0;
  for (unsigned y = y0; y < y1; ++y) n += img.at(x, y) == c;
  return n;
}

}  // namespace

TEST(MonitorChart, BandsFillToTheReadingAndIdleGpusStandOut) {
  GpuChart chart;
  chart.title = "job 1 step 0";
  chart.duration = 10;
  chart.gpus.push_back({"n1 GPU 0", {{5, 100}, {10, 50}}, 75, false});
  chart.gpus.push_back({"n1 GPU 1", {{5, 0}, {10, 2}}, 1, true});
  const Image img = draw_gpu_chart(chart);
  EXPECT_EQ(img.width(), 1200u);
  // Find band 0's busy colour (4) in a column of the first half (100%) and the second (50%).
  const unsigned top = 56, band = 44;
  unsigned early = 0, late = 0, idle_late = 0;
  for (unsigned x = 0; x < img.width(); ++x) {
    const unsigned n = count(img, x, top, top + band, 4);
    if (n == band) ++early;
    if (n == band / 2) ++late;
    if (count(img, x, top + band + 10, top + 2 * band + 10, 5) == 1) ++idle_late;  // 2% of 44
  }
  EXPECT_GT(early, 300u);
  EXPECT_GT(late, 300u);
  EXPECT_GT(idle_late, 300u);
  EXPECT_EQ(img.height(), 56u + 2 * 44 + 10 + 56);
}

TEST(MonitorChart, NothingToDrawIsAnError) {
  GpuChart chart;
  EXPECT_THROW(draw_gpu_chart(chart), ddp::plan::PlanError);
}

TEST(MonitorFont, GlyphsAreDrawnWhereAsked) {
  Image img(40, 10, {{0, 0, 0}, {255, 255, 255}});
  EXPECT_EQ(draw_text(img, 1, 1, "I1", 1), 11u);
  // 'I' is .###. on its top row; '1' has a single column in its middle row.
  EXPECT_EQ(img.at(1, 1), 0);
  EXPECT_EQ(img.at(2, 1), 1);
  EXPECT_EQ(img.at(4, 1), 1);
  EXPECT_EQ(img.at(5, 1), 0);
  EXPECT_EQ(img.at(9, 4), 1);
  EXPECT_EQ(img.at(8, 4), 0);
  EXPECT_EQ(text_width("abc", 2), 34u);
  Image big(40, 20, {{0, 0, 0}, {255, 255, 255}});
  draw_text(big, 0, 0, "\x01", 1, 2);  // drawn as '?', whose top row is .###.
  EXPECT_EQ(big.at(2, 0), 1);
  EXPECT_EQ(big.at(1, 0), 0);
}
