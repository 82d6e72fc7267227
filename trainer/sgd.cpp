#include "sgd.hpp"

namespace ddp::trainer {

Sgd::Sgd(std::vector<torch::Tensor> params, double lr, double momentum, double weight_decay)
    : params_(std::move(params)), lr_(lr), momentum_(momentum), weight_decay_(weight_decay) {
  for (const auto& p : params_) buffers_.push_back(torch::zeros_like(p));
}

void Sgd::zero_grad() {
  // In place, never set to none: the gradient synchronizer keeps writing into these tensors.
  for (auto& p : params_)
    if (p.grad().defined()) p.mutable_grad().zero_();
}

void Sgd::step() {
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

}  // namespace ddp::trainer
