// Dropout whose CPU mask costs a random draw per dropped element, not per element.
//
// torch::nn::Dropout draws one Bernoulli variable per activation; on CPU (no MKL in Debian's
// LibTorch) that is two Mersenne-Twister draws and a double per element, about 1.8 million per
// step at width 0.1 and batch 32: ~10% of a CPU training step for p = 0.01. The gaps between the
// dropped positions of independent Bernoulli(p) trials are Geometric(p), so drawing the gaps and
// summing them gives the very same distribution of masks with ~p*n draws, and applying them
// as a scale plus a sparse fill spares the dense mask and its multiplications (forward and backward). On CUDA the native
// kernel (Philox, fused) is faster and is used as is. Semantics are nn::Dropout's: in training
// each element is zeroed with probability p and the others scaled by 1/(1-p); in eval, identity.
#pragma once

#include <torch/torch.h>

namespace ddp::trainer {

// The positions dropped among n elements, each independently with probability p, in increasing
// order. Uses the default CPU generator.
torch::Tensor dropout_positions(int64_t n, double p);

// Training-mode dropout on a CPU tensor: x / (1 - p) with dropout_positions(x.numel(), p) zeroed,
// positions counted in x's memory order. The output keeps x's layout; backward applies the same
// positions to the gradient. No dense mask is made or kept.
torch::Tensor sparse_dropout(const torch::Tensor& x, double p);

struct DropoutImpl : torch::nn::Module {
  explicit DropoutImpl(double p);
  torch::Tensor forward(const torch::Tensor& x);
  double p;
};
TORCH_MODULE(Dropout);

}  // namespace ddp::trainer
