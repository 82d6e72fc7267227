#include "dropout.hpp"

#include <cmath>
#include <stdexcept>
#include <vector>

namespace ddp::trainer {

torch::Tensor sparse_dropout_mask(const torch::Tensor& like, double p) {
  const int64_t n = like.numel();
  const auto long_opts = torch::TensorOptions().dtype(torch::kLong);
  // Enough gaps to pass the end almost always (mean + 8 standard deviations); the loop draws
  // more in the rare case they do not.
  const double mean = static_cast<double>(n) * p;
  const auto batch = static_cast<int64_t>(mean + 8 * std::sqrt(mean * (1 - p)) + 16);
  std::vector<torch::Tensor> parts;
  int64_t next = 0;  // first position not yet decided
  while (next < n) {
    // Geometric(p) counts trials up to and including the first drop: position = start + gap - 1.
    const auto gaps = torch::empty({batch}, long_opts).geometric_(p);
    const auto positions = gaps.cumsum(0).add_(next - 1);
    next = positions[-1].item<int64_t>() + 1;
    parts.push_back(positions);
  }
  auto dropped = torch::cat(parts);
  dropped = dropped.masked_select(dropped.lt(n));

  // Any order of the elements gives the same distribution, so the flat mask is laid out in the
  // tensor's own memory order (channels_last stays channels_last).
  auto flat = torch::full({n}, 1.0 / (1.0 - p), like.options().device(torch::kCPU));
  flat.index_fill_(0, dropped, 0);
  const auto mask = like.is_non_overlapping_and_dense() ? flat.as_strided(like.sizes(), like.strides())
                                                        : flat.view(like.sizes());
  return mask.to(like.device());
}

DropoutImpl::DropoutImpl(double p_) : p(p_) {
  if (!(p >= 0 && p < 1)) throw std::invalid_argument("dropout probability must be in [0, 1)");
}

torch::Tensor DropoutImpl::forward(const torch::Tensor& x) {
  if (!is_training() || p == 0) return x;
  if (!x.device().is_cpu()) return torch::dropout(x, p, true);
  return x * sparse_dropout_mask(x, p);
}

}  // namespace ddp::trainer
