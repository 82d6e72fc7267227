#include "data/download_progress.hpp"

#include <cmath>

#include "human_text.hpp"

namespace ddp::cifar {

DownloadProgress::DownloadProgress(std::FILE* out, bool terminal,
                                   std::function<void(const std::string&)> tell)
    : out_(out), terminal_(terminal), tell_(std::move(tell)) {}

std::string DownloadProgress::line(std::uint64_t done, std::uint64_t total, double seconds) {
  const double mb = static_cast<double>(done) / 1e6;
  const double total_mb = static_cast<double>(total) / 1e6;
  std::string text = total > 0 ? plan::fixed_text(mb, 1) + " of " + plan::fixed_text(total_mb, 1) +
                                     " MB (" + std::to_string(done * 100 / total) + "%)"
                               : plan::fixed_text(mb, 1) + " MB";
  if (seconds > 0.5 && done > 0) {
    const double rate = static_cast<double>(done) / seconds;
    text += ", " + plan::fixed_text(rate / 1e6, 1) + " MB/s";
    if (total > done) text += ", about " + plan::duration_text(static_cast<double>(total - done) / rate) + " left";
  }
  return text;
}

void DownloadProgress::update(std::uint64_t done, std::uint64_t total, double seconds) {
  const int percent = total > 0 ? static_cast<int>(done * 100 / total) : -1;
  const bool step = percent >= next_percent_;
  // The terminal's line is redrawn twice a second; the log and the others hear of it at every
  // step of 10% and at least every 10 s.
  if (terminal_ && (step || seconds - last_drawn_ >= 0.5)) {
    std::fprintf(out_, "\rcifar: downloading %s\033[K", line(done, total, seconds).c_str());
    std::fflush(out_);
    drew_ = true;
    last_drawn_ = seconds;
  }
  if (!step && seconds - last_told_ < kProgressSeconds) return;
  const std::string text = line(done, total, seconds);
  if (!terminal_) {
    std::fprintf(out_, "cifar: downloading %s\n", text.c_str());
    std::fflush(out_);
  }
  if (tell_) tell_(text);
  last_told_ = seconds;
  if (percent >= 0) next_percent_ = (percent / kProgressPercentStep + 1) * kProgressPercentStep;
}

void DownloadProgress::finish() {
  if (terminal_ && drew_) std::fprintf(out_, "\n");
}

}  // namespace ddp::cifar
