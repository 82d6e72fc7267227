#pragma once
// How a download shows that it moves. On a terminal: one line rewritten in place. Without one (a
// batch job's log): a line at every 10% and at least every 10 s, so a log shows progress without
// filling up with it. Every line, on a terminal or not, also goes to `tell` (ddp-cifar100's rank 0
// passes it on to the ranks that wait for the data).
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>

namespace ddp::cifar {

inline constexpr int kProgressPercentStep = 10;
inline constexpr double kProgressSeconds = 10;

class DownloadProgress {
 public:
  DownloadProgress(std::FILE* out, bool terminal, std::function<void(const std::string&)> tell);
  // `done` of `total` bytes (`total` 0: not known yet) `seconds` after the download began.
  void update(std::uint64_t done, std::uint64_t total, double seconds);
  // The terminal's line ends.
  void finish();

  // "16.9 of 168.5 MB (10%), 2.3 MB/s, about 1.1 min left"
  static std::string line(std::uint64_t done, std::uint64_t total, double seconds);

 private:
  std::FILE* out_;
  bool terminal_;
  std::function<void(const std::string&)> tell_;
  int next_percent_ = kProgressPercentStep;
  double last_told_ = 0;   // the last line of the log, and the last word to `tell`
  double last_drawn_ = 0;  // the terminal's line
  bool drew_ = false;
};

}  // namespace ddp::cifar
