#include "precision.hpp"

#include <stdexcept>

#include <ATen/autocast_mode.h>
#include <torch/version.h>

namespace ddp::trainer {

Precision parse_precision(const std::string& text) {
  if (text == "fp32") return Precision::Fp32;
  if (text == "fp16") return Precision::Fp16;
  if (text == "bf16") return Precision::Bf16;
  throw std::invalid_argument("--precision '" + text + "' is unknown; allowed: fp32, fp16, bf16");
}

const char* precision_name(Precision p) {
  switch (p) {
    case Precision::Fp16: return "fp16";
    case Precision::Bf16: return "bf16";
    case Precision::Fp32: break;
  }
  return "fp32";
}

void check_precision_supported(Precision precision, const torch::Device& device) {
  if (precision == Precision::Fp16 && !device.is_cuda())
    throw std::invalid_argument(
        "--precision fp16 needs a GPU (CPU kernels lack fp16); use fp32 or bf16 on CPU");
}

namespace {

void set_autocast(bool cuda, bool on, at::ScalarType dtype) {
#if TORCH_VERSION_MAJOR >= 2
  const auto type = cuda ? at::kCUDA : at::kCPU;
  at::autocast::set_autocast_dtype(type, dtype);
  at::autocast::set_autocast_enabled(type, on);
#else
  if (cuda) {
    at::autocast::set_autocast_gpu_dtype(dtype);
    at::autocast::set_enabled(on);
  } else {
    at::autocast::set_autocast_cpu_dtype(dtype);
    at::autocast::set_cpu_enabled(on);
  }
#endif
}

}  // namespace

AutocastScope::AutocastScope(Precision precision, const torch::Device& device) {
  if (precision == Precision::Fp32) return;
  active_ = true;
  cuda_ = device.is_cuda();
  set_autocast(cuda_, true, precision == Precision::Fp16 ? at::kHalf : at::kBFloat16);
}

AutocastScope::~AutocastScope() {
  if (!active_) return;
  set_autocast(cuda_, false, cuda_ ? at::kHalf : at::kBFloat16);
  // Casts of fp32 weights are cached by tensor identity for the autocast region: keeping them
  // would feed the next forward stale weights.
  at::autocast::clear_cache();
}

LossScaler::LossScaler(Precision precision, const torch::Device& device)
    : enabled_(precision == Precision::Fp16) {
  const auto f = torch::TensorOptions().dtype(torch::kFloat).device(device);
  scale_ = torch::full({1}, 65536.0f, f);
  growth_tracker_ = torch::zeros({1}, f.dtype(torch::kInt));
  found_inf_ = torch::zeros({1}, f);
  one_ = torch::ones({}, f);
}

torch::Tensor LossScaler::scale(const torch::Tensor& loss) const {
  return enabled_ ? loss * scale_.to(loss.scalar_type()) : loss;
}

torch::Tensor LossScaler::unscale_and_update(const std::vector<torch::Tensor>& params) {
  if (!enabled_) return one_;
  std::vector<torch::Tensor> grads;
  for (const auto& p : params)
    if (p.grad().defined()) grads.push_back(p.grad());
  found_inf_.zero_();
  const auto inv_scale = scale_.reciprocal();
  at::_amp_foreach_non_finite_check_and_unscale_(grads, found_inf_, inv_scale);
  // The same constants as PyTorch's GradScaler.
  at::_amp_update_scale_(scale_, growth_tracker_, found_inf_, 2.0, 0.5, 2000);
  return (1 - found_inf_).squeeze();
}

torch::Tensor LossScaler::state() const {
  return torch::cat({scale_.cpu(), growth_tracker_.cpu().to(torch::kFloat)});
}

void LossScaler::load_state(const torch::Tensor& state) {
  scale_.copy_(state.narrow(0, 0, 1));
  growth_tracker_.copy_(state.narrow(0, 1, 1).to(torch::kInt));
}

double LossScaler::current_scale() const { return enabled_ ? scale_.item<double>() : 1.0; }

}  // namespace ddp::trainer
