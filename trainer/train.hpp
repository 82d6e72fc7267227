// The training run: the reference recipe (train_ddp.py) on libddp, with its output lines.
#pragma once

#include <memory>

#include "ddp/log.hpp"
#include "ddp/process_group.hpp"
#include "options.hpp"

namespace ddp::trainer {

struct DeviceData {
  torch::Tensor train_images, train_labels, test_images, test_labels;  // resident on the device
};

// Returns the process exit status.
int train(const TrainOptions& options, const std::shared_ptr<ProcessGroup>& group,
          const DeviceData& data, const Logger& log);

}  // namespace ddp::trainer
