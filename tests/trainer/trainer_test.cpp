// Unit tests of ddp-cifar100's parts: the model is the reference's, augmentation does what the
// reference's transforms do, the optimizer is PyTorch's SGD, checkpoints round-trip.
#include <gtest/gtest.h>

#include <filesystem>

#include <torch/torch.h>

#include "augment.hpp"
#include "checkpoint.hpp"
#include "bn_relu.hpp"
#include "dropout.hpp"
#include "precision.hpp"
#include "sgd.hpp"
#include "wide_resnet.hpp"

namespace tr = ddp::trainer;

TEST(WideResNet, HasTheReferenceParameterCount) {
  tr::WideResNet model(100, 1.0);
  EXPECT_EQ(tr::parameter_count(*model), 17175444);
}

TEST(WideResNet, CountsTheReferenceForwardFlops) {
  // By hand: 32x32 stage 1,468.9 M (stem 0.9, 16->160 47.2, 160->160 x3 1,415.6, shortcut 5.2),
  // 16x16 and 8x8 stages 1,677.7 M each, classifier 0.128 M.
  tr::WideResNet model(100, 1.0);
  EXPECT_NEAR(tr::forward_flops_per_image(model), 4.8244e9, 0.0001e9);
  // Width 0.25 (40/80/160 channels): 102.46 M + 104.86 M + 104.86 M + 0.032 M.
  tr::WideResNet quarter(100, 0.25);
  EXPECT_NEAR(tr::forward_flops_per_image(quarter), 312.2e6, 0.1e6);
}

TEST(WideResNet, MapsABatchOfImagesToOneHundredLogits) {
  tr::WideResNet model(100, 0.1);
  model->eval();
  const auto out = model->forward(torch::randn({2, 3, 32, 32}));
  EXPECT_EQ(out.sizes(), (std::vector<int64_t>{2, 100}));
}

TEST(WideResNet, ScaledShortcutsAreBiased1x1Convolutions) {
  tr::ConvBlock scaled(16, 40, true), same(40, 40, false);
  ASSERT_TRUE(scaled->shortcut);
  EXPECT_TRUE(scaled->shortcut->bias.defined());
  EXPECT_EQ(scaled->shortcut->weight.sizes(), (std::vector<int64_t>{40, 16, 1, 1}));
  EXPECT_FALSE(same->shortcut);
}

// relu(bn(x)) through the fused kernels and through the native operations, from the same state,
// with the same incoming gradient: outputs, running statistics and the three gradients agree.
void expect_fused_matches_native(const torch::Tensor& input, double tolerance) {
  torch::nn::BatchNorm2d fused_bn(input.size(1)), native_bn(input.size(1));
  torch::manual_seed(3);
  {
    torch::NoGradGuard no_grad;
    fused_bn->weight.uniform_(0.5, 1.5);
    fused_bn->bias.uniform_(-0.5, 0.5);
    native_bn->weight.copy_(fused_bn->weight);
    native_bn->bias.copy_(fused_bn->bias);
  }
  ASSERT_TRUE(tr::fused_batch_norm_relu_applies(fused_bn, input));
  const auto x1 = input.detach().clone(at::MemoryFormat::ChannelsLast).requires_grad_();
  const auto x2 = input.detach().clone(at::MemoryFormat::ChannelsLast).requires_grad_();
  const auto y1 = tr::batch_norm_relu(fused_bn, x1);
  const auto y2 = native_bn->forward(x2).relu();
  EXPECT_TRUE(y1.is_contiguous(at::MemoryFormat::ChannelsLast));
  EXPECT_TRUE(torch::allclose(y1, y2, tolerance, tolerance)) << (y1 - y2).abs().max();
  EXPECT_TRUE(
      torch::allclose(fused_bn->running_mean, native_bn->running_mean, tolerance, tolerance));
  EXPECT_TRUE(torch::allclose(fused_bn->running_var, native_bn->running_var, tolerance, tolerance));
  EXPECT_EQ(fused_bn->num_batches_tracked.item<int64_t>(), 1);
  const auto g = torch::randn_like(y2);  // contiguous: the fused backward must take any layout
  y1.backward(g);
  y2.backward(g);
  EXPECT_TRUE(torch::allclose(x1.grad(), x2.grad(), tolerance, tolerance))
      << (x1.grad() - x2.grad()).abs().max();
  EXPECT_TRUE(
      torch::allclose(fused_bn->weight.grad(), native_bn->weight.grad(), tolerance, tolerance));
  EXPECT_TRUE(torch::allclose(fused_bn->bias.grad(), native_bn->bias.grad(), tolerance, tolerance));
}

TEST(BatchNormRelu, FusedMatchesNativeOnAnActivation) {
  torch::manual_seed(11);
  expect_fused_matches_native(
      torch::randn({16, 40, 8, 8}).contiguous(at::MemoryFormat::ChannelsLast), 1e-4);
}

TEST(BatchNormRelu, FusedKeepsItsPrecisionWhenTheMeanIsFarFromZero) {
  // Standard deviation 0.01 under a mean of 100: compared with the native operations in double
  // precision, the fused float kernels are at least as close as the native float ones (measured:
  // output error 0.0012 against 0.015, input gradient 88 against 424, weight gradient 0.017
  // against 0.58; the running variance within 1e-7 for both).
  torch::manual_seed(12);
  const auto x =
      (torch::randn({8, 24, 16, 16}) * 0.01 + 100).contiguous(at::MemoryFormat::ChannelsLast);
  const auto g = torch::randn({8, 24, 16, 16});
  auto run = [&](bool fused, torch::Dtype dtype) {
    torch::nn::BatchNorm2d bn(24);
    bn->to(dtype);
    const auto input = x.to(dtype).requires_grad_();
    const auto y = fused ? tr::batch_norm_relu(bn, input) : bn->forward(input).relu();
    if (fused) {
      EXPECT_TRUE(tr::fused_batch_norm_relu_applies(bn, input));
    }
    y.backward(g.to(dtype));
    return std::vector<torch::Tensor>{y.to(torch::kDouble), input.grad().to(torch::kDouble),
                                      bn->weight.grad().to(torch::kDouble),
                                      bn->running_var.to(torch::kDouble)};
  };
  const auto truth = run(false, torch::kDouble), fused = run(true, torch::kFloat),
             native = run(false, torch::kFloat);
  for (size_t i = 0; i < truth.size(); ++i) {
    const double fused_error = (fused[i] - truth[i]).abs().max().item<double>();
    const double native_error = (native[i] - truth[i]).abs().max().item<double>();
    EXPECT_LE(fused_error, native_error * 1.01 + 1e-6) << "output " << i;
  }
}

TEST(BatchNormRelu, FusedSpreadsOverThreads) {
  const int threads = at::get_num_threads();
  at::set_num_threads(2);
  torch::manual_seed(13);
  expect_fused_matches_native(
      torch::randn({32, 16, 16, 16}).contiguous(at::MemoryFormat::ChannelsLast), 1e-4);
  at::set_num_threads(threads);
}

TEST(BatchNormRelu, OtherCasesTakeTheNativeOperations) {
  torch::nn::BatchNorm2d bn(8);
  const auto nchw = torch::randn({4, 8, 4, 4});
  EXPECT_FALSE(tr::fused_batch_norm_relu_applies(bn, nchw));
  EXPECT_FALSE(tr::fused_batch_norm_relu_applies(
      bn, nchw.to(torch::kDouble).contiguous(at::MemoryFormat::ChannelsLast)));
  const auto nhwc = nchw.contiguous(at::MemoryFormat::ChannelsLast);
  EXPECT_TRUE(tr::fused_batch_norm_relu_applies(bn, nhwc));
  bn->eval();
  EXPECT_FALSE(tr::fused_batch_norm_relu_applies(bn, nhwc));
  EXPECT_TRUE(torch::allclose(tr::batch_norm_relu(bn, nhwc), bn->forward(nhwc).relu()));
}

TEST(Augment, FlipMirrorsOnlyTheChosenImages) {
  const auto x = torch::arange(2 * 3 * 32 * 32).view({2, 3, 32, 32}).to(torch::kUInt8);
  const auto out = tr::flip_where(x, torch::tensor({true, false}));
  EXPECT_TRUE(out[0].equal(x[0].flip({2})));
  EXPECT_TRUE(out[1].equal(x[1]));
}

TEST(Augment, CropOfThePaddedImageShiftsAndFillsWithZero) {
  const auto x = torch::full({1, 3, 32, 32}, 7, torch::kUInt8);
  // Offset (0,0): the top-left 4 rows and columns come from the zero padding.
  auto out = tr::padded_crop(x, torch::tensor({0}), torch::tensor({0}));
  EXPECT_EQ(out[0][0][3][10].item<int>(), 0);
  EXPECT_EQ(out[0][0][4][4].item<int>(), 7);
  // Offset (4,4): the image itself.
  out = tr::padded_crop(x, torch::tensor({4}), torch::tensor({4}));
  EXPECT_TRUE(out.equal(x));
  // Offset (8,2): a shift up by 4 and right by 2, as torchvision's RandomCrop(32, padding=4).
  const auto ramp = torch::arange(32 * 32)
                        .view({1, 1, 32, 32})
                        .expand({1, 3, 32, 32})
                        .remainder(251)
                        .to(torch::kUInt8)
                        .contiguous();
  out = tr::padded_crop(ramp, torch::tensor({8}), torch::tensor({2}));
  EXPECT_EQ(out[0][1][0][5].item<int>(), ramp[0][1][4][3].item<int>());
  EXPECT_EQ(out[0][1][31][0].item<int>(), 0);  // bottom rows come from the padding
}

TEST(Augment, NormalizeUsesCifar100MeanAndStd) {
  const auto x = torch::full({1, 3, 1, 1}, 255, torch::kUInt8);
  const auto out = tr::normalize(x);
  EXPECT_NEAR(out[0][0][0][0].item<float>(), (1 - 0.5071f) / 0.2675f, 1e-5);
  EXPECT_NEAR(out[0][2][0][0].item<float>(), (1 - 0.4408f) / 0.2761f, 1e-5);
}

TEST(Augment, BatchKeepsShapeAndIsNormalizedFloat) {
  const auto x = torch::randint(0, 256, {8, 3, 32, 32}).to(torch::kUInt8);
  const auto out = tr::augment_and_normalize(x);
  EXPECT_EQ(out.sizes(), x.sizes());
  EXPECT_EQ(out.scalar_type(), torch::kFloat);
}

TEST(Sgd, MatchesPyTorchsSgdWithMomentumAndWeightDecay) {
  torch::manual_seed(3);
  auto a = torch::randn({5, 4}, torch::requires_grad());
  auto b = a.detach().clone().requires_grad_();
  tr::Sgd mine({a}, 0.1, 0.9, 5e-4);
  torch::optim::SGD theirs({b}, torch::optim::SGDOptions(0.1).momentum(0.9).weight_decay(5e-4));
  for (int step = 0; step < 4; ++step) {
    const auto g = torch::randn({5, 4});
    mine.zero_grad();
    theirs.zero_grad();
    (a * g).sum().backward();
    (b * g).sum().backward();
    mine.step();
    theirs.step();
  }
  EXPECT_TRUE(torch::allclose(a, b, 1e-6, 1e-7));
}

TEST(Sgd, AMaskedStepChangesNothingEvenWithInfiniteGradients) {
  auto p = torch::ones({3}, torch::requires_grad());
  tr::Sgd opt({p}, 0.1, 0.9, 5e-4);
  (p * 2).sum().backward();
  opt.step(torch::ones({}));
  const auto after_one = p.detach().clone();
  const auto buffer = opt.momentum_buffers()[0].clone();
  opt.zero_grad();
  (p * std::numeric_limits<float>::infinity()).sum().backward();
  opt.step(torch::zeros({}));
  EXPECT_TRUE(p.detach().equal(after_one));
  EXPECT_TRUE(opt.momentum_buffers()[0].equal(buffer));
}

TEST(Precision, Fp16NeedsAGpuAndSaysSo) {
  try {
    tr::check_precision_supported(tr::Precision::Fp16, torch::kCPU);
    FAIL() << "fp16 accepted on CPU";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("use fp32 or bf16"), std::string::npos);
  }
  EXPECT_THROW(tr::parse_precision("fp8"), std::invalid_argument);
}

TEST(Precision, Bf16AutocastRunsTheModelInBf16OnCpu) {
  tr::WideResNet model(100, 0.05);
  model->eval();
  torch::Tensor out;
  {
    tr::AutocastScope scope(tr::Precision::Bf16, torch::kCPU);
    out = model->forward(torch::randn({2, 3, 32, 32}));
  }
  EXPECT_EQ(out.scalar_type(), torch::kBFloat16);
  EXPECT_EQ(model->forward(torch::randn({2, 3, 32, 32})).scalar_type(), torch::kFloat);
}

TEST(Checkpoint, RoundTripsModelOptimizerScalerAndProgress) {
  const auto dir = std::filesystem::temp_directory_path() / ("ddp-ckpt-" + std::to_string(getpid()));
  tr::TrainOptions o;
  o.width = 0.05;
  torch::manual_seed(1);
  tr::WideResNet a(100, o.width);
  tr::Sgd opt_a(a->parameters(), 0.1, 0.9, 5e-4);
  opt_a.momentum_buffers()[3].fill_(0.25);
  tr::LossScaler scaler_a(tr::Precision::Fp32, torch::kCPU);
  tr::Progress p{3, {0.1, 0.2, 0.3}, 12.5, 3000};
  tr::save_checkpoint(dir.string(), a, opt_a, scaler_a, p, o);

  torch::manual_seed(2);
  tr::WideResNet b(100, o.width);
  tr::Sgd opt_b(b->parameters(), 0.1, 0.9, 5e-4);
  tr::LossScaler scaler_b(tr::Precision::Fp32, torch::kCPU);
  const auto loaded = tr::load_checkpoint(dir.string(), b, opt_b, scaler_b, o);
  ASSERT_TRUE(loaded);
  EXPECT_EQ(loaded->epochs_done, 3);
  EXPECT_EQ(loaded->val_accuracy, (std::vector<double>{0.1, 0.2, 0.3}));
  EXPECT_DOUBLE_EQ(loaded->total_images, 3000);
  for (std::size_t i = 0; i < a->parameters().size(); ++i)
    EXPECT_TRUE(a->parameters()[i].equal(b->parameters()[i]));
  EXPECT_TRUE(opt_b.momentum_buffers()[3].eq(0.25).all().item<bool>());

  o.width = 0.1;  // another model: refused, with the reason
  tr::WideResNet c(100, o.width);
  tr::Sgd opt_c(c->parameters(), 0.1, 0.9, 5e-4);
  try {
    tr::load_checkpoint(dir.string(), c, opt_c, scaler_b, o);
    FAIL() << "a checkpoint of another width was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("different width"), std::string::npos) << e.what();
  }
  std::filesystem::remove_all(dir);
}

TEST(Dropout, EveryPositionIsDroppedWithProbabilityP) {
  // Few elements, many draws: each position, the first and the last included, is dropped with
  // probability p, independently of its neighbour.
  torch::manual_seed(7);
  constexpr double p = 0.3;
  constexpr int draws = 20000;
  auto dropped = torch::zeros({10}, torch::kDouble);
  double both = 0;
  for (int i = 0; i < draws; ++i) {
    const auto positions = tr::dropout_positions(10, p);
    ASSERT_TRUE(positions.numel() == 0 ||
                (positions.min().item<int64_t>() >= 0 && positions.max().item<int64_t>() < 10));
    const auto zero = torch::zeros({10}, torch::kBool).index_fill_(0, positions, true);
    ASSERT_EQ(zero.sum().item<int64_t>(), positions.numel()) << "a position repeated";
    dropped += zero.to(torch::kDouble);
    both += (zero[3] & zero[4]).item<bool>() ? 1 : 0;
  }
  const double sd = std::sqrt(p * (1 - p) / draws);
  for (int k = 0; k < 10; ++k)
    EXPECT_NEAR(dropped[k].item<double>() / draws, p, 5 * sd) << "position " << k;
  EXPECT_NEAR(both / draws, p * p, 5 * std::sqrt(p * p * (1 - p * p) / draws));
}

TEST(Dropout, LargeTensorsDropTheRightShareScaleTheRestAndKeepTheLayout) {
  torch::manual_seed(8);
  const auto x = (torch::rand({32, 16, 32, 32}) + 1).contiguous(at::MemoryFormat::ChannelsLast);
  const auto y = tr::sparse_dropout(x, 0.01);
  EXPECT_EQ(y.strides(), x.strides());
  const auto zero = y.eq(0);
  const double n = static_cast<double>(x.numel());
  EXPECT_NEAR(zero.sum().item<double>() / n, 0.01, 5 * std::sqrt(0.01 * 0.99 / n));
  EXPECT_TRUE(torch::allclose(y, torch::where(zero, torch::zeros_like(x), x / 0.99)));
}

TEST(Dropout, GradientIsZeroExactlyWhereTheOutputWasForAnyGradientLayout) {
  // The positions are in the input's memory order; a gradient arriving in another layout (here
  // contiguous for a channels_last input) must still be masked element for element.
  torch::manual_seed(10);
  const auto x = (torch::rand({4, 8, 6, 6}) + 1).contiguous(at::MemoryFormat::ChannelsLast);
  x.requires_grad_();
  const auto y = tr::sparse_dropout(x, 0.2);
  const auto g = torch::rand({4, 8, 6, 6}) + 1;
  y.backward(g);
  EXPECT_TRUE(torch::equal(x.grad().eq(0), y.eq(0)));
  EXPECT_TRUE(torch::allclose(x.grad(), torch::where(y.eq(0), torch::zeros_like(g), g / 0.8)));
}

TEST(Dropout, TrainsThroughTheMaskAndIsIdentityInEval) {
  tr::Dropout dropout(0.5);
  torch::manual_seed(9);
  const auto x = torch::randn({1000}, torch::requires_grad());
  const auto y = dropout->forward(x);
  y.sum().backward();
  // d(sum(x * mask))/dx = mask: zero where dropped, 2 where kept.
  EXPECT_TRUE(torch::equal(x.grad().eq(0), y.eq(0)));
  EXPECT_TRUE(torch::allclose(y, x.detach() * x.grad()));
  dropout->eval();
  EXPECT_TRUE(torch::equal(dropout->forward(x), x));
  EXPECT_THROW(tr::Dropout(1.0), std::invalid_argument);
}
