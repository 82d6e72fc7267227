#include "sgd.hpp"

#include <optional>

#include <torch/version.h>

// _fused_sgd_ with its found_inf argument: LibTorch 2.4 and newer (Debian 12's 1.13 lacks it).
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
#define DDP_FUSED_SGD 1
#endif

namespace ddp::trainer {

Sgd::Sgd(std::vector<torch::Tensor> params, double lr, double momentum, double weight_decay)
    : params_(std::move(params)), lr_(lr), momentum_(momentum), weight_decay_(weight_decay) {
  for (const auto& p : params_) buffers_.push_back(torch::zeros_like(p));
}

void Sgd::zero_grad() {
  // In place, never set to none: the gradient synchronizer keeps writing into these tensors. One
  // multi-tensor call: on a GPU a launch or two instead of one per parameter.
  std::vector<torch::Tensor> grads;
  for (auto& p : params_)
    if (p.grad().defined()) grads.push_back(p.mutable_grad());
  if (!grads.empty()) at::_foreach_zero_(grads);
}

bool Sgd::fused() const {
#ifdef DDP_FUSED_SGD
  // The fused kernel treats each parameter, gradient and buffer as one flat array: they must be on
  // one GPU with one dtype and the same dense layout (channels_last weights keep theirs).
  bool any = false;
  for (std::size_t i = 0; i < params_.size(); ++i) {
    const auto &p = params_[i], &g = p.grad(), &b = buffers_[i];
    if (!g.defined()) continue;
    if (!p.is_cuda() || g.device() != p.device() || b.device() != p.device() ||
        g.scalar_type() != p.scalar_type() || b.scalar_type() != p.scalar_type() ||
        g.sizes() != p.sizes() || g.strides() != p.strides() || b.strides() != p.strides() ||
        !p.is_non_overlapping_and_dense())
      return false;
    if (any && p.device() != params_.front().device()) return false;
    any = true;
  }
  return any && momentum_ > 0;
#else
  return false;
#endif
}

bool Sgd::fused_step(const torch::Tensor* found_inf) {
#ifdef DDP_FUSED_SGD
  if (!fused()) return false;
  std::vector<torch::Tensor> p, g, b;
  for (std::size_t i = 0; i < params_.size(); ++i)
    if (params_[i].grad().defined()) {
      p.push_back(params_[i]);
      g.push_back(params_[i].grad());
      b.push_back(buffers_[i]);
    }
  torch::NoGradGuard no_grad;
  // dampening 0, no Nesterov, minimise; is_first_step false: the buffers start at zero, so the
  // first step's momentum*0 + g is PyTorch's buf = g.
  at::_fused_sgd_(p, g, b, weight_decay_, momentum_, lr_, 0.0, false, false, false, std::nullopt,
                  found_inf ? std::optional<torch::Tensor>(*found_inf) : std::nullopt);
  return true;
#else
  (void)found_inf;
  return false;
#endif
}

void Sgd::step() {
  if (fused_step(nullptr)) return;
  torch::NoGradGuard no_grad;
  for (std::size_t i = 0; i < params_.size(); ++i) {
    auto& p = params_[i];
    if (!p.grad().defined()) continue;
    buffers_[i].mul_(momentum_).add_(p.grad()).add_(p, weight_decay_);
    p.add_(buffers_[i], -lr_);
  }
}

void Sgd::step(const torch::Tensor& keep) {
  torch::NoGradGuard no_grad;
  // keep = 1: buf = momentum*buf + g.  keep = 0: buf = buf + 0.
  const auto buffer_factor = keep * momentum_ + (1 - keep);
  const auto step_size = keep * (-lr_);
  for (std::size_t i = 0; i < params_.size(); ++i) {
    auto& p = params_[i];
    if (!p.grad().defined()) continue;
    // nan_to_num: an overflowed gradient times keep=0 must be 0, not NaN.
    auto g = torch::nan_to_num(p.grad(), 0.0, 0.0, 0.0).add_(p, weight_decay_).mul_(keep);
    buffers_[i].mul_(buffer_factor).add_(g);
    p.add_(buffers_[i] * step_size);
  }
}

void Sgd::step_unless(const torch::Tensor& found_inf) {
  if (fused_step(&found_inf)) return;
  step((1 - found_inf).squeeze());
}

}  // namespace ddp::trainer
