#include "dropout.hpp"

#include <cmath>
#include <stdexcept>
#include <vector>

namespace ddp::trainer {
namespace {

// The tensor's elements as one flat view in memory order, so that a position means the same
// element for every tensor laid out like it (channels_last stays channels_last).
torch::Tensor memory_order_view(const torch::Tensor& t) {
  return t.as_strided({t.numel()}, {1}, t.storage_offset());
}

// y = x / (1 - p) with the dropped positions zeroed, laid out as sizes/strides say.
torch::Tensor scale_and_drop(const torch::Tensor& x, at::IntArrayRef sizes, at::IntArrayRef strides,
                             const torch::Tensor& dropped, double p) {
  auto y = at::empty_strided(sizes, strides, x.options());
  at::mul_out(y, x, at::scalar_tensor(1.0 / (1.0 - p), x.options().dtype(torch::kDouble)));
  memory_order_view(y).index_fill_(0, dropped, 0);
  return y;
}

// Forward and backward are the same sparse operation: the gradient of x * mask is grad * mask.
// Only the dropped positions (~p*n indices) and the layout are kept for backward, no dense mask.
struct SparseDropoutFunction : torch::autograd::Function<SparseDropoutFunction> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x,
                               double p) {
    const auto layout = x.is_non_overlapping_and_dense() ? x : x.contiguous();
    const auto dropped = dropout_positions(x.numel(), p);
    ctx->saved_data["p"] = p;
    ctx->saved_data["sizes"] = layout.sizes().vec();
    ctx->saved_data["strides"] = layout.strides().vec();
    ctx->save_for_backward({dropped});
    return scale_and_drop(x, layout.sizes(), layout.strides(), dropped, p);
  }

  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx,
                                               torch::autograd::tensor_list grads) {
    const auto sizes = ctx->saved_data["sizes"].toIntVector();
    const auto strides = ctx->saved_data["strides"].toIntVector();
    const auto dropped = ctx->get_saved_variables()[0];
    return {scale_and_drop(grads[0], sizes, strides, dropped, ctx->saved_data["p"].toDouble()),
            torch::Tensor()};
  }
};

}  // namespace

torch::Tensor dropout_positions(int64_t n, double p) {
  const auto long_opts = torch::TensorOptions().dtype(torch::kLong);
  if (n == 0 || p == 0) return torch::empty({0}, long_opts);
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
  const auto dropped = parts.size() == 1 ? parts[0] : torch::cat(parts);
  return dropped.masked_select(dropped.lt(n));
}

torch::Tensor sparse_dropout(const torch::Tensor& x, double p) {
  return SparseDropoutFunction::apply(x, p);
}

DropoutImpl::DropoutImpl(double p_) : p(p_) {
  if (!(p >= 0 && p < 1)) throw std::invalid_argument("dropout probability must be in [0, 1)");
}

torch::Tensor DropoutImpl::forward(const torch::Tensor& x) {
  if (!is_training() || p == 0) return x;
  if (!x.device().is_cpu()) return torch::dropout(x, p, true);
  return sparse_dropout(x, p);
}

}  // namespace ddp::trainer
