#include "wide_resnet.hpp"

#include <algorithm>
#include <cmath>

#include "bn_act_gpu.hpp"
#include "bn_relu.hpp"

namespace ddp::trainer {
namespace {

namespace nn = torch::nn;

int64_t scaled(int64_t channels, double width) {
  return std::max<int64_t>(1, static_cast<int64_t>(std::lround(channels * width)));
}

double conv_flops(const nn::Conv2d& conv, int64_t h, int64_t w) {
  const auto& weight = conv->weight;  // out x in/groups x kh x kw; stride 1, 'same' size here
  return 2.0 * static_cast<double>(weight.numel()) * static_cast<double>(h * w);
}

double cbr_flops(const Cbr& cbr, int64_t h, int64_t w) { return conv_flops(cbr->conv, h, w); }

}  // namespace

CbrImpl::CbrImpl(int64_t in, int64_t out) {
  conv = register_module("conv", nn::Conv2d(nn::Conv2dOptions(in, out, 3).padding(torch::kSame).bias(false)));
  bn = register_module("bn", nn::BatchNorm2d(out));
}

torch::Tensor CbrImpl::forward(const torch::Tensor& x) { return activate(conv->forward(x)); }

torch::Tensor CbrImpl::activate(const torch::Tensor& x, double dropout,
                                const torch::Tensor& residual) {
  if (gpu_fusion && gpu_bn_act_applies(bn, x, residual))
    return gpu_batch_norm_relu(bn, x, dropout, residual);
  auto y = batch_norm_relu(bn, x);
  if (dropout > 0) y = torch::dropout(y, dropout, true);
  return residual.defined() ? y + residual : y;
}

ConvBlockImpl::ConvBlockImpl(int64_t in, int64_t out, bool scale) {
  layer1 = register_module("layer1", Cbr(in, out));
  dropout = register_module("dropout", Dropout(0.01));
  layer2 = register_module("layer2", Cbr(out, out));
  if (scale) shortcut = register_module("shortcut", nn::Conv2d(nn::Conv2dOptions(in, out, 1)));
}

torch::Tensor ConvBlockImpl::forward(const torch::Tensor& x) {
  const auto residual = shortcut ? shortcut->forward(x) : x;
  if (layer1->gpu_fusion && x.is_cuda() && is_training()) {
    // relu(bn(conv1 x)) -> dropout, and relu(bn(conv2 h)) + residual, each as one operation.
    const auto h = layer1->activate(layer1->conv->forward(x), dropout->p);
    return layer2->activate(layer2->conv->forward(h), 0, residual);
  }
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

void WideResNetImpl::set_gpu_fusion(bool on) {
  for (const auto& m : modules())
    if (const auto cbr = std::dynamic_pointer_cast<CbrImpl>(m)) cbr->gpu_fusion = on;
}

double forward_flops_per_image(WideResNet& model) {
  int64_t h = 32, w = 32;
  double flops = 0;
  for (const auto& layer : model->features->children()) {
    if (const auto cbr = std::dynamic_pointer_cast<CbrImpl>(layer)) {
      flops += cbr_flops(Cbr(cbr), h, w);
    } else if (const auto block = std::dynamic_pointer_cast<ConvBlockImpl>(layer)) {
      flops += cbr_flops(block->layer1, h, w) + cbr_flops(block->layer2, h, w);
      if (block->shortcut) flops += conv_flops(block->shortcut, h, w);
    } else if (const auto pool = std::dynamic_pointer_cast<nn::MaxPool2dImpl>(layer)) {
      h /= (*pool->options.kernel_size())[0];
      w /= (*pool->options.kernel_size())[1];
    } else if (std::dynamic_pointer_cast<nn::AvgPool2dImpl>(layer)) {
      h = w = 1;  // pooled to one value per channel before the classifier
    }
  }
  return flops + 2.0 * static_cast<double>(model->classifier->weight.numel());
}

int64_t parameter_count(torch::nn::Module& module) {
  int64_t n = 0;
  for (const auto& p : module.parameters()) n += p.numel();
  return n;
}

}  // namespace ddp::trainer
