// Checkpoints: everything a restarted or requeued job needs to go on (model, optimizer momentum,
// loss scale, epoch and the step in it, early-stopping history, totals; the sampler's position
// follows from the epoch and step). Written by rank 0 at the end of each epoch, and mid-epoch
// when a signal stops the run (stop_signals.hpp), to a temporary file renamed into place, so a
// job killed mid-write leaves the previous checkpoint intact.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "options.hpp"
#include "precision.hpp"
#include "sgd.hpp"
#include "wide_resnet.hpp"

namespace ddp::trainer {

struct Progress {
  int epochs_done = 0;
  std::vector<double> val_accuracy;
  double total_time = 0;
  double total_images = 0;
  // Of the epoch after epochs_done, when a signal stopped it part way: the steps done, the
  // training loss summed over them (the ranks' mean), the seconds they took.
  std::int64_t steps_done = 0;
  double epoch_loss_sum = 0;
  double epoch_seconds = 0;
};

std::string checkpoint_path(const std::string& dir);

void save_checkpoint(const std::string& dir, WideResNet& model, Sgd& optimizer,
                     const LossScaler& scaler, const Progress& progress,
                     const TrainOptions& options);

// Loads into the given objects; nullopt when the directory holds no checkpoint. Throws
// std::runtime_error when the checkpoint is unreadable or was made with a different model or batch.
std::optional<Progress> load_checkpoint(const std::string& dir, WideResNet& model, Sgd& optimizer,
                                        LossScaler& scaler, const TrainOptions& options);

}  // namespace ddp::trainer
