#include "augment.hpp"

namespace ddp::trainer {
namespace {

constexpr int64_t kPad = 4;
constexpr int64_t kSize = 32;

// Filled on the device, not copied from the host: a copy from host memory would stop a CUDA
// graph's capture (and make the host wait each step).
torch::Tensor per_channel(float a, float b, float c, const torch::TensorOptions& opts) {
  return torch::cat(
             {torch::full({1}, a, opts), torch::full({1}, b, opts), torch::full({1}, c, opts)})
      .view({1, 3, 1, 1});
}

}  // namespace

torch::Tensor flip_where(const torch::Tensor& images, const torch::Tensor& flip) {
  return torch::where(flip.view({-1, 1, 1, 1}), images.flip({3}), images);
}

torch::Tensor padded_crop(const torch::Tensor& images, const torch::Tensor& dy,
                          const torch::Tensor& dx) {
  using torch::indexing::None;
  using torch::indexing::Slice;
  const auto padded = torch::constant_pad_nd(images, {kPad, kPad, kPad, kPad}, 0);
  const auto opts = torch::TensorOptions().dtype(torch::kLong).device(images.device());
  const auto grid = torch::arange(kSize, opts);
  const auto rows = (dy.view({-1, 1}) + grid).view({-1, 1, kSize, 1});  // [B,1,32,1]
  const auto cols = (dx.view({-1, 1}) + grid).view({-1, 1, 1, kSize});  // [B,1,1,32]
  const auto batch = torch::arange(images.size(0), opts).view({-1, 1, 1, 1});
  const auto channel = torch::arange(images.size(1), opts).view({1, -1, 1, 1});
  return padded.index({batch, channel, rows, cols});
}

torch::Tensor normalize(const torch::Tensor& images) {
  const auto opts = torch::TensorOptions().dtype(torch::kFloat).device(images.device());
  const auto mean = per_channel(0.5071f, 0.4867f, 0.4408f, opts);
  const auto std = per_channel(0.2675f, 0.2565f, 0.2761f, opts);
  return (images.to(torch::kFloat).div_(255.0f) - mean).div_(std);
}

torch::Tensor augment_and_normalize(const torch::Tensor& images) {
  const int64_t b = images.size(0);
  // Drawn on the images' device (its default generator, seeded by torch::manual_seed): a copy
  // from host memory would make the host wait for the GPU every step.
  const auto opts = torch::TensorOptions().device(images.device());
  const auto flip = torch::rand({b}, opts).lt(0.5);
  const auto offsets = torch::randint(0, 2 * kPad + 1, {2, b}, opts.dtype(torch::kLong));
  return normalize(padded_crop(flip_where(images, flip), offsets[0], offsets[1]));
}

}  // namespace ddp::trainer
