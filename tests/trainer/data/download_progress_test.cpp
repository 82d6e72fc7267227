// A download's progress in a batch log: a line at every 10% and at least every 10 s; on a terminal
// one line redrawn; every line told to the waiting ranks either way.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "data/download_progress.hpp"

using ddp::cifar::DownloadProgress;

namespace {

struct Captured {
  std::string out;
  std::vector<std::string> told;
};

// Feeds (done, total, seconds) updates into a DownloadProgress writing to memory.
Captured feed(bool terminal, const std::vector<std::tuple<std::uint64_t, std::uint64_t, double>>& updates) {
  Captured c;
  char* text = nullptr;
  std::size_t size = 0;
  std::FILE* out = open_memstream(&text, &size);
  DownloadProgress p(out, terminal, [&](const std::string& line) { c.told.push_back(line); });
  for (const auto& [done, total, seconds] : updates) p.update(done, total, seconds);
  p.finish();
  std::fclose(out);
  c.out = text;
  std::free(text);
  return c;
}

std::size_t lines(const std::string& s) { return static_cast<std::size_t>(std::count(s.begin(), s.end(), '\n')); }

}  // namespace

TEST(DownloadProgress, ALogGetsALineEveryTenPercent) {
  std::vector<std::tuple<std::uint64_t, std::uint64_t, double>> updates;
  for (int i = 1; i <= 200; ++i) updates.emplace_back(i * 1000000ull, 200000000ull, i * 0.04);
  const Captured c = feed(false, updates);
  EXPECT_EQ(lines(c.out), 10u) << c.out;
  EXPECT_EQ(c.told.size(), 10u);
  EXPECT_NE(c.out.find("cifar: downloading 20.0 of 200.0 MB (10%), "), std::string::npos) << c.out;
  EXPECT_NE(c.out.find("cifar: downloading 200.0 of 200.0 MB (100%)"), std::string::npos) << c.out;
  EXPECT_EQ(c.out.find('\r'), std::string::npos);
}

TEST(DownloadProgress, ASlowOneGetsALineEveryTenSeconds) {
  // 1% a minute: no 10% step for ten minutes, a line every 10 s all the same.
  std::vector<std::tuple<std::uint64_t, std::uint64_t, double>> updates;
  for (int s = 1; s <= 60; ++s) updates.emplace_back(s * 1000ull, 6000000ull, s);
  const Captured c = feed(false, updates);
  EXPECT_EQ(lines(c.out), 6u) << c.out;
  EXPECT_EQ(c.told.size(), 6u);
  // Without a total it still says how far it got.
  const Captured unknown = feed(false, {{1000000, 0, 10}, {2000000, 0, 21}});
  EXPECT_EQ(unknown.out, "cifar: downloading 1.0 MB, 0.1 MB/s\ncifar: downloading 2.0 MB, 0.1 MB/s\n");
}

TEST(DownloadProgress, ATerminalGetsOneLineRedrawnAndTheOthersTheSameWords) {
  std::vector<std::tuple<std::uint64_t, std::uint64_t, double>> updates;
  for (int i = 1; i <= 20; ++i) updates.emplace_back(i * 5000000ull, 100000000ull, i * 1.0);
  const Captured c = feed(true, updates);
  EXPECT_EQ(lines(c.out), 1u);  // finish() ends the redrawn line
  EXPECT_EQ(std::count(c.out.begin(), c.out.end(), '\r'), 20);
  EXPECT_EQ(c.told.size(), 10u);
}

TEST(DownloadProgress, TheLineSaysRateAndTimeLeft) {
  EXPECT_EQ(DownloadProgress::line(16850000, 168500000, 10), "16.9 of 168.5 MB (10%), 1.7 MB/s, about 90.0 s left");
  EXPECT_EQ(DownloadProgress::line(0, 168500000, 0), "0.0 of 168.5 MB (0%)");
}
