#include "wide_resnet.hpp"

#include <algorithm>
#include <cmath>

namespace ddp::trainer {
namespace {

namespace nn = torch::nn;

int64_t scaled(int64_t channels, double width) {
  return std::max<int64_t>(1, static_cast<int64_t>(std::lround(channels * width)));
}

}  // namespace

CbrImpl::CbrImpl(int64_t in, int64_t out) {
  conv = register_module("conv", nn::Conv2d(nn::Conv2dOptions(in, out, 3).padding(torch::kSame).bias(false)));
  bn = register_module("bn", nn::BatchNorm2d(out));
}

// ReLU in place on the batch norm's fresh output, as torchvision's ResNets do: the same values and
// gradients (batch norm's backward does not read its output), one activation buffer less per layer.
torch::Tensor CbrImpl::forward(const torch::Tensor& x) { return bn->forward(conv->forward(x)).relu_(); }

ConvBlockImpl::ConvBlockImpl(int64_t in, int64_t out, bool scale) {
  layer1 = register_module("layer1", Cbr(in, out));
  dropout = register_module("dropout", Dropout(0.01));
  layer2 = register_module("layer2", Cbr(out, out));
  if (scale) shortcut = register_module("shortcut", nn::Conv2d(nn::Conv2dOptions(in, out, 1)));
}

torch::Tensor ConvBlockImpl::forward(const torch::Tensor& x) {
  const auto residual = shortcut ? shortcut->forward(x) : x;
  return layer2->forward(dropout->forward(layer1->forward(x))) + residual;
}

WideResNetImpl::WideResNetImpl(int64_t num_classes, double width) {
  const int64_t c1 = scaled(160, width), c2 = scaled(320, width), c3 = scaled(640, width);
  features = register_module(
      "features",
      nn::Sequential(Cbr(3, 16), ConvBlock(16, c1, true), ConvBlock(c1, c1, false),
                     nn::MaxPool2d(2), ConvBlock(c1, c2, true), ConvBlock(c2, c2, false),
                     nn::MaxPool2d(2), ConvBlock(c2, c3, true), ConvBlock(c3, c3, false),
                     // 7x7 pooling of the 8x8 map: the reference averages its top-left 7x7.
                     nn::AvgPool2d(7), nn::Flatten()));
  classifier = register_module("classifier", nn::Linear(c3, num_classes));
}

torch::Tensor WideResNetImpl::forward(torch::Tensor x) {
  return classifier->forward(features->forward(x));
}

int64_t parameter_count(torch::nn::Module& module) {
  int64_t n = 0;
  for (const auto& p : module.parameters()) n += p.numel();
  return n;
}

}  // namespace ddp::trainer
