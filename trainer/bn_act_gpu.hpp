// The tail of a cbr layer on the GPU as one operation: relu(batch_norm(x)), then dropout and a
// residual add where the block has them, with the batch statistics of training. The kernels are
// in cuda/bn_act.cu (why fused: see there); this is their autograd function. Built into CUDA
// builds of LibTorch when nvcc is there (DDP_TRAINER_CUDA_KERNELS); elsewhere nothing applies
// and the callers take the native operations.
// Semantics: BatchNorm2d in training (biased variance normalises, the unbiased one updates the
// running variance with the module's momentum), ReLU, dropout that zeroes each element with
// probability p and scales the others by 1/(1-p), then + residual. The dropout draws come from a
// seed drawn from Torch's generator on the device (graph-safe), not from native dropout's stream.
#pragma once

#include <torch/torch.h>

namespace ddp::trainer {

// Whether the GPU kernels were built in.
bool gpu_bn_act_built();

// Whether gpu_batch_norm_relu takes this module, activation and residual (undefined: none): a
// training module with affine parameters and running statistics, a channels_last float, half or
// bfloat16 activation on a GPU, channels filling whole 16-byte vectors, a residual like x.
bool gpu_bn_act_applies(const torch::nn::BatchNorm2d& bn, const torch::Tensor& x,
                        const torch::Tensor& residual = {});

// relu(bn(x)) [then dropout p] [then + residual], as one operation; only where applies.
torch::Tensor gpu_batch_norm_relu(torch::nn::BatchNorm2d& bn, const torch::Tensor& x,
                                  double dropout = 0, const torch::Tensor& residual = {});

}  // namespace ddp::trainer
