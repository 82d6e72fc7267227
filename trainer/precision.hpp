// Mixed precision: fp32, bf16 (autocast, no loss scaling) or fp16 (autocast with dynamic loss
// scaling). The loss scaler keeps its state on the device and never makes the host wait: an
// overflowing step is skipped by the optimizer through a 0/1 tensor, not an if on the host.
#pragma once

#include <string>

#include <torch/torch.h>

namespace ddp::trainer {

enum class Precision { Fp32, Fp16, Bf16 };
Precision parse_precision(const std::string& text);  // throws std::invalid_argument naming values
const char* precision_name(Precision p);

// Turns autocast on for the forward pass of its scope (no-op for fp32). LibTorch 1.13 and 2.x
// spell these calls differently; this is the one place that knows.
class AutocastScope {
 public:
  AutocastScope(Precision precision, const torch::Device& device);
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  bool active_ = false;
  bool cuda_ = false;
};

// Checks that the precision can run on the device; throws std::invalid_argument with the fix.
void check_precision_supported(Precision precision, const torch::Device& device);

class LossScaler {
 public:
  LossScaler(Precision precision, const torch::Device& device);
  bool enabled() const { return enabled_; }
  torch::Tensor scale(const torch::Tensor& loss) const;
  // Unscales the gradients in place; returns a 0-d float tensor, 1 where the step may be applied
  // and 0 where a gradient overflowed. Then grows or backs off the scale.
  torch::Tensor unscale_and_update(const std::vector<torch::Tensor>& params);
  // float [1] on the device: 1 where the last unscale_and_update found an overflow, else 0.
  const torch::Tensor& found_inf() const { return found_inf_; }
  torch::Tensor state() const;  // [scale, growth_tracker] for checkpoints
  void load_state(const torch::Tensor& state);
  double current_scale() const;  // host read: for logs at epoch end only

 private:
  bool enabled_;
  torch::Tensor scale_;           // float [1]
  torch::Tensor growth_tracker_;  // int [1]
  torch::Tensor found_inf_;       // float [1]
  torch::Tensor one_;
};

}  // namespace ddp::trainer
