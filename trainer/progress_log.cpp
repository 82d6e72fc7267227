#include "progress_log.hpp"

#include "human_text.hpp"

namespace ddp::trainer {
namespace {

std::string fixed(double v, int digits) { return plan::fixed_text(v, digits); }

std::string left_text(const std::optional<double>& left) {
  return left ? ", about " + plan::duration_text(*left) + " left" : "";
}

}  // namespace

std::string time_stamp() { return plan::local_time_text("%Y-%m-%d %H:%M:%S"); }

std::optional<double> time_left(double seconds, double done, double left) {
  if (done <= 0 || left <= 0) return std::nullopt;
  return seconds / done * left;
}

std::string epoch_line(int epoch, int epochs, double seconds, double train_loss,
                       std::optional<double> left) {
  return "[" + time_stamp() + "] Epoch " + std::to_string(epoch) + "/" + std::to_string(epochs) +
         " completed in " + fixed(seconds, 3) + " seconds, training loss " + fixed(train_loss, 4) +
         left_text(left);
}

std::string step_line(int epoch, int epochs, std::int64_t step, std::int64_t steps, double train_loss,
                      std::optional<double> left) {
  return "[" + time_stamp() + "] Epoch " + std::to_string(epoch) + "/" + std::to_string(epochs) +
         ": step " + std::to_string(step) + " of " + std::to_string(steps) + ", training loss " +
         fixed(train_loss, 4) + " (rank 0)" + left_text(left);
}

}  // namespace ddp::trainer
