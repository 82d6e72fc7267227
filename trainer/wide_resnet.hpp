// The reference "WideResNet" of the PyTorch-on-Olivia guide, layer for layer (not Zagoruyko's
// WRN): cbr = 3x3 conv (no bias) -> batch norm -> ReLU; a block is cbr, dropout 0.01, cbr, plus a
// shortcut that is a biased 1x1 conv when the width changes. `width` scales the 160/320/640
// channels (1.0 = the reference, 17,175,444 parameters); small values make CPU tests fast.
#pragma once

#include <torch/torch.h>

#include "dropout.hpp"

namespace ddp::trainer {

// conv 3x3 (padding 'same', no bias) -> batch norm -> ReLU.
struct CbrImpl : torch::nn::Module {
  CbrImpl(int64_t in, int64_t out);
  torch::Tensor forward(const torch::Tensor& x);
  // relu(bn(x)), then dropout p, then + residual (if defined): the layer after its convolution,
  // through the fused GPU operation where it applies (bn_act_gpu.hpp) and gpu_fusion is on.
  torch::Tensor activate(const torch::Tensor& x, double dropout = 0,
                         const torch::Tensor& residual = {});
  torch::nn::Conv2d conv{nullptr};
  torch::nn::BatchNorm2d bn{nullptr};
  bool gpu_fusion = true;
};
TORCH_MODULE(Cbr);

struct ConvBlockImpl : torch::nn::Module {
  ConvBlockImpl(int64_t in, int64_t out, bool scale);
  torch::Tensor forward(const torch::Tensor& x);
  Cbr layer1{nullptr}, layer2{nullptr};
  Dropout dropout{nullptr};
  torch::nn::Conv2d shortcut{nullptr};  // null: identity
};
TORCH_MODULE(ConvBlock);

struct WideResNetImpl : torch::nn::Module {
  explicit WideResNetImpl(int64_t num_classes = 100, double width = 1.0);
  torch::Tensor forward(torch::Tensor x);
  // On (the default): each cbr layer's batch norm, ReLU, dropout and residual add run as one fused
  // GPU operation where it applies; off: as the native operations, for comparison.
  void set_gpu_fusion(bool on);
  torch::nn::Sequential features{nullptr};
  torch::nn::Linear classifier{nullptr};
};
TORCH_MODULE(WideResNet);

int64_t parameter_count(torch::nn::Module& module);

// Floating-point operations (2 per multiply-add of the convolutions and the classifier) of one
// forward pass of a 32x32 image, read off the model's layers: 4.82e9 for the reference. Training
// costs about three times that (forward, gradient of the input, gradient of the weights), the
// usual basis of achieved TFLOP/s and of model FLOP utilisation.
double forward_flops_per_image(WideResNet& model);

}  // namespace ddp::trainer
