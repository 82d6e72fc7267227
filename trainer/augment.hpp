// The reference's input pipeline as batched tensor ops on the device, on the uint8 images that
// stay resident there: random horizontal flip, random 32x32 crop of the image zero-padded by 4,
// then scaling to [0,1] and per-channel normalisation (CIFAR-100 mean and std).
#pragma once

#include <torch/torch.h>

namespace ddp::trainer {

// images: uint8 [B,3,32,32] on any device. Returns float [B,3,32,32] on the same device.
torch::Tensor augment_and_normalize(const torch::Tensor& images);
torch::Tensor normalize(const torch::Tensor& images);

// The pieces, for tests: flip where `flip` is true; crop at per-sample offsets in [0, 8].
torch::Tensor flip_where(const torch::Tensor& images, const torch::Tensor& flip);
torch::Tensor padded_crop(const torch::Tensor& images, const torch::Tensor& dy,
                          const torch::Tensor& dx);

}  // namespace ddp::trainer
