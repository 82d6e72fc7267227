// Batch norm followed by ReLU as one operation on CPU, for channels_last float activations in
// training: the reference's cbr ends with BatchNorm2d -> ReLU, and on a CPU both are limited by
// memory traffic, not arithmetic. Separately they read and write the activation five times
// forward (statistics, normalise, ReLU) and seven times backward (ReLU's mask, batch norm's two
// passes); fused, three and five, and the ReLU output is not kept for backward (the mask is
// recomputed from the input with the very same float operations).
// Semantics are BatchNorm2d's in training (batch statistics with the biased variance, running
// statistics updated with the unbiased one and the module's momentum) then ReLU. Anything else
// (eval mode, CUDA, other dtypes or layouts, no affine parameters) takes the native operations.
#pragma once

#include <torch/torch.h>

namespace ddp::trainer {

// relu(bn(x)), using the fused kernels when they apply.
torch::Tensor batch_norm_relu(torch::nn::BatchNorm2d& bn, const torch::Tensor& x);

// Whether batch_norm_relu takes the fused path for this module and input.
bool fused_batch_norm_relu_applies(const torch::nn::BatchNorm2d& bn, const torch::Tensor& x);

}  // namespace ddp::trainer
