// The lines ddp-cifar100's rank 0 writes while it trains, for a batch job's log: each begins with
// the local time, so a log read later says when; an epoch's line has its training loss and the
// time the remaining epochs will take at the pace so far; a long epoch also gets a line at most
// every kStepLineSeconds. The reference's own lines (Validation Loss..., Epoch Throughput...)
// follow unchanged.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace ddp::trainer {

inline constexpr double kStepLineSeconds = 60;

// "2025-06-01 12:00:03", local time.
std::string time_stamp();
// Seconds the work left will take at the pace so far: `done` of `done + left` units of work took
// `seconds`. nullopt before any is done, and when none is left.
std::optional<double> time_left(double seconds, double done, double left);

// "[2025-06-01 12:00:03] Epoch 2/5 completed in 31.234 seconds, training loss 3.1234, about 1.6
// min left"
std::string epoch_line(int epoch, int epochs, double seconds, double train_loss,
                       std::optional<double> left);
// "[...] Epoch 2/5: step 40 of 97, training loss 3.2100 (rank 0), about 3.1 min left"
std::string step_line(int epoch, int epochs, std::int64_t step, std::int64_t steps, double train_loss,
                      std::optional<double> left);

}  // namespace ddp::trainer
