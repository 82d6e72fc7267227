// Tests of ddp-cifar100's GPU parts: the fused batch norm kernels against the native operations
// (in float, from the same inputs), their dropout mask in forward and backward, PyTorch's fused SGD
// against the loop of tensor operations, and a captured CUDA graph against the same steps run
// eagerly. They need a GPU and a CUDA build of LibTorch, and skip elsewhere; the CPU test at the
// end runs everywhere.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "bn_act_gpu.hpp"
#include "sgd.hpp"
#include "step_graph.hpp"

namespace tr = ddp::trainer;

namespace {

bool gpu_kernels() { return torch::cuda::is_available() && tr::gpu_bn_act_built(); }

torch::nn::BatchNorm2d make_bn(int64_t channels, uint64_t seed) {
  torch::nn::BatchNorm2d bn(channels);
  torch::manual_seed(seed);
  torch::NoGradGuard no_grad;
  bn->weight.uniform_(0.5, 1.5);
  bn->bias.uniform_(-0.5, 0.5);
  bn->running_mean.uniform_(-0.1, 0.1);
  bn->running_var.uniform_(0.9, 1.1);
  return bn;
}

torch::nn::BatchNorm2d copy_of(const torch::nn::BatchNorm2d& bn) {
  torch::nn::BatchNorm2d c(bn->options);
  torch::NoGradGuard no_grad;
  c->weight.copy_(bn->weight);
  c->bias.copy_(bn->bias);
  c->running_mean.copy_(bn->running_mean);
  c->running_var.copy_(bn->running_var);
  return c;
}

// Largest |a - b| over the largest |b|: the error relative to the tensor's scale.
double relative_error(const torch::Tensor& a, const torch::Tensor& b) {
  const auto bf = b.to(torch::kFloat64).cpu(), af = a.to(torch::kFloat64).cpu();
  return (af - bf).abs().max().item<double>() / std::max(bf.abs().max().item<double>(), 1e-12);
}

struct Case {
  torch::ScalarType dtype;
  std::vector<int64_t> shape;
  double tolerance;  // on outputs and input gradients; gradients of weight and bias: 1e-3
};

// Forward and backward of the fused operation with dropout probability p, and of the native
// operations in float on the same input with the mask the fused one applied (where its output is
// positive, times 1/(1-p)): outputs, running statistics and the three gradients agree.
void expect_matches_native(const Case& c, double p) {
  const auto cuda = torch::Device(torch::kCUDA);
  auto fused_bn = make_bn(c.shape[1], 7);
  auto native_bn = copy_of(fused_bn);
  fused_bn->to(cuda);
  native_bn->to(cuda);
  torch::manual_seed(11);
  // A mean far from zero and a spread of 3: the shifted sums must keep the variance's precision.
  const auto x32 = (torch::randn(c.shape, torch::TensorOptions().device(cuda)) * 3 + 5)
                       .contiguous(at::MemoryFormat::ChannelsLast);
  const auto x = x32.to(c.dtype).detach().requires_grad_();
  ASSERT_TRUE(tr::gpu_bn_act_applies(fused_bn, x));
  const auto y = tr::gpu_batch_norm_relu(fused_bn, x, p);
  EXPECT_TRUE(y.is_contiguous(at::MemoryFormat::ChannelsLast));
  EXPECT_EQ(y.scalar_type(), c.dtype);

  const auto xr = x.detach().to(torch::kFloat).requires_grad_();
  const auto mask = (y.detach() > 0).to(torch::kFloat) / (1 - p);
  const auto y_ref = native_bn->forward(xr) * mask;
  EXPECT_LT(relative_error(y, y_ref), c.tolerance);
  EXPECT_LT(relative_error(fused_bn->running_mean, native_bn->running_mean), 1e-4);
  EXPECT_LT(relative_error(fused_bn->running_var, native_bn->running_var), 1e-4);
  EXPECT_EQ(fused_bn->num_batches_tracked.item<int64_t>(), 1);

  // Contiguous, not channels_last: the fused backward takes any layout.
  const auto g = torch::randn(y_ref.sizes(), y_ref.options());
  y.backward(g.to(c.dtype));
  y_ref.backward(g.to(c.dtype).to(torch::kFloat));
  EXPECT_LT(relative_error(x.grad(), xr.grad()), c.tolerance);
  EXPECT_LT(relative_error(fused_bn->weight.grad(), native_bn->weight.grad()), 1e-3);
  EXPECT_LT(relative_error(fused_bn->bias.grad(), native_bn->bias.grad()), 1e-3);
}

}  // namespace

TEST(GpuBatchNormRelu, MatchesNativeInFloatHalfAndBFloat16) {
  if (!gpu_kernels()) GTEST_SKIP() << "needs a GPU and a CUDA build with the kernels";
  // A small map (one block, the row remainder loop) and a stage-1-like one (many blocks, the
  // unrolled loop); 16 channels: k = 128 rows per block.
  for (const Case& c :
       {Case{torch::kFloat, {4, 16, 5, 3}, 1e-5}, Case{torch::kFloat, {32, 160, 16, 16}, 1e-5},
        Case{torch::kHalf, {32, 160, 16, 16}, 2e-3}, Case{torch::kHalf, {16, 640, 8, 8}, 2e-3},
        Case{torch::kBFloat16, {32, 320, 16, 16}, 1e-2}}) {
    SCOPED_TRACE(std::string(c10::toString(c.dtype)) + " " + c10::str(at::IntArrayRef(c.shape)));
    expect_matches_native(c, 0.0);
  }
}

TEST(GpuBatchNormRelu, DropoutDropsTheRightShareAndBackwardUsesTheSameMask) {
  if (!gpu_kernels()) GTEST_SKIP() << "needs a GPU and a CUDA build with the kernels";
  expect_matches_native(Case{torch::kHalf, {64, 160, 16, 16}, 2e-3}, 0.2);
  // The share dropped among the positive outputs, and a fresh mask for every call.
  const auto cuda = torch::Device(torch::kCUDA);
  auto bn = make_bn(160, 3);
  bn->to(cuda);
  const auto x = torch::randn({64, 160, 16, 16}, torch::TensorOptions().device(cuda))
                     .to(torch::kHalf)
                     .contiguous(at::MemoryFormat::ChannelsLast);
  torch::NoGradGuard no_grad;
  const auto plain = tr::gpu_batch_norm_relu(bn, x, 0.0);
  const auto a = tr::gpu_batch_norm_relu(bn, x, 0.2), b = tr::gpu_batch_norm_relu(bn, x, 0.2);
  const auto positive = plain > 0;
  const double n = positive.sum().item<double>();
  const double dropped = (positive & (a == 0)).sum().item<double>() / n;
  EXPECT_NEAR(dropped, 0.2, 5 * std::sqrt(0.2 * 0.8 / n));
  const auto kept = positive & (a != 0);
  EXPECT_LT(relative_error(a.masked_select(kept), plain.masked_select(kept) / 0.8), 2e-3);
  EXPECT_FALSE(torch::equal(a == 0, b == 0));
}

TEST(GpuBatchNormRelu, ResidualIsAddedAndGetsTheOutputGradient) {
  if (!gpu_kernels()) GTEST_SKIP() << "needs a GPU and a CUDA build with the kernels";
  const auto cuda = torch::Device(torch::kCUDA);
  auto bn1 = make_bn(64, 5), bn2 = copy_of(bn1);
  bn1->to(cuda);
  bn2->to(cuda);
  const auto opts = torch::TensorOptions().device(cuda);
  const auto x = torch::randn({8, 64, 8, 8}, opts).contiguous(at::MemoryFormat::ChannelsLast);
  const auto r = torch::randn({8, 64, 8, 8}, opts).contiguous(at::MemoryFormat::ChannelsLast);
  const auto x1 = x.clone().requires_grad_(), x2 = x.clone().requires_grad_();
  const auto r1 = r.clone().requires_grad_();
  ASSERT_TRUE(tr::gpu_bn_act_applies(bn1, x1, r1));
  const auto with = tr::gpu_batch_norm_relu(bn1, x1, 0.0, r1);
  const auto without = tr::gpu_batch_norm_relu(bn2, x2, 0.0);
  EXPECT_LT(relative_error(with - r, without), 1e-6);
  const auto g = torch::randn_like(x);
  with.backward(g);
  without.backward(g);
  EXPECT_TRUE(torch::equal(x1.grad(), x2.grad()));
  EXPECT_TRUE(torch::equal(r1.grad(), g));
}

TEST(GpuBatchNormRelu, OtherCasesAreLeftToTheNativeOperations) {
  if (!gpu_kernels()) GTEST_SKIP() << "needs a GPU and a CUDA build with the kernels";
  const auto cuda = torch::Device(torch::kCUDA);
  auto bn = make_bn(12, 1);
  bn->to(cuda);
  const auto opts = torch::TensorOptions().device(cuda).dtype(torch::kHalf);
  // 12 half channels do not fill 16-byte vectors; NCHW is not channels_last; eval uses running
  // statistics; a CPU tensor is not the GPU's.
  EXPECT_FALSE(tr::gpu_bn_act_applies(
      bn, torch::randn({2, 12, 4, 4}, opts).contiguous(at::MemoryFormat::ChannelsLast)));
  auto bn16 = make_bn(16, 1);
  bn16->to(cuda);
  EXPECT_FALSE(tr::gpu_bn_act_applies(bn16, torch::randn({2, 16, 4, 4}, opts)));
  EXPECT_FALSE(tr::gpu_bn_act_applies(
      bn16, torch::randn({2, 16, 4, 4}).contiguous(at::MemoryFormat::ChannelsLast)));
  bn16->eval();
  EXPECT_FALSE(tr::gpu_bn_act_applies(
      bn16, torch::randn({2, 16, 4, 4}, opts).contiguous(at::MemoryFormat::ChannelsLast)));
}

TEST(GpuSgd, FusedStepMatchesTheLoopOnTheCpu) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "needs a GPU";
  const auto cuda = torch::Device(torch::kCUDA);
  torch::manual_seed(2);
  std::vector<torch::Tensor> cpu{
      torch::randn({16, 8, 3, 3}).contiguous(at::MemoryFormat::ChannelsLast), torch::randn({16})};
  std::vector<torch::Tensor> gpu;
  for (auto& p : cpu) {
    p.requires_grad_();
    gpu.push_back(p.detach().to(cuda).requires_grad_());
  }
  tr::Sgd on_cpu(cpu, 0.1, 0.9, 5e-4), on_gpu(gpu, 0.1, 0.9, 5e-4);
  const auto found_inf = torch::zeros({1}, torch::TensorOptions().device(cuda));
  for (int step = 0; step < 3; ++step) {
    for (std::size_t i = 0; i < cpu.size(); ++i) {
      const auto g = torch::randn_like(cpu[i]);
      cpu[i].mutable_grad() = g;
      gpu[i].mutable_grad() = g.to(cuda);
    }
    EXPECT_TRUE(on_gpu.fused());
    on_cpu.step();
    on_gpu.step_unless(found_inf);
  }
  for (std::size_t i = 0; i < cpu.size(); ++i) {
    EXPECT_LT(relative_error(gpu[i], cpu[i]), 1e-6);
    EXPECT_LT(relative_error(on_gpu.momentum_buffers()[i], on_cpu.momentum_buffers()[i]), 1e-6);
  }
  // An overflowed step changes nothing, even with infinite gradients.
  const auto before = gpu[0].detach().clone();
  gpu[0].mutable_grad().fill_(std::numeric_limits<float>::infinity());
  on_gpu.step_unless(torch::ones({1}, torch::TensorOptions().device(cuda)));
  EXPECT_TRUE(torch::equal(gpu[0], before));
}

TEST(GpuStepGraph, ReplaysGiveWhatEagerStepsGive) {
  if (!torch::cuda::is_available() || !tr::cuda_graphs_built())
    GTEST_SKIP() << "needs a GPU and a CUDA build";
  const auto cuda = torch::Device(torch::kCUDA);
  const tr::TrainingStream stream(cuda);
  const auto data = torch::arange(100, torch::TensorOptions().device(cuda).dtype(torch::kFloat));
  auto total = torch::zeros({1}, data.options());
  // A step with a random draw, as augmentation has: graph-safe generators give each replay fresh
  // numbers, so the sums match what eager steps draw only in distribution; the data part exactly.
  tr::StepGraph graph(
      [&](const torch::Tensor& idx) {
        total.add_(data.index_select(0, idx).sum());
        total.add_(torch::rand({1}, data.options()).mul_(0));
      },
      true, 2);
  double expected = 0;
  for (int64_t s = 0; s < 6; ++s) {
    const auto idx =
        torch::arange(s, s + 10, torch::TensorOptions().device(cuda).dtype(torch::kLong));
    graph.run(idx);
    expected += 10.0 * s + 45.0;
  }
  EXPECT_TRUE(graph.captured());
  EXPECT_DOUBLE_EQ(total.item<double>(), expected);
}

TEST(Sgd, StepUnlessFoundInfIsAStepWhereNoOverflowAndNothingWhereOne) {
  torch::manual_seed(4);
  auto a = torch::randn({5, 3}).requires_grad_(), b = a.detach().clone().requires_grad_();
  tr::Sgd plain({a}, 0.1, 0.9, 5e-4), masked({b}, 0.1, 0.9, 5e-4);
  for (int step = 0; step < 2; ++step) {
    const auto g = torch::randn({5, 3});
    a.mutable_grad() = g;
    b.mutable_grad() = g.clone();
    plain.step();
    masked.step_unless(torch::zeros({1}));
  }
  EXPECT_TRUE(torch::allclose(a, b));
  const auto before = b.detach().clone();
  const auto buffer = masked.momentum_buffers()[0].clone();
  b.mutable_grad().fill_(std::numeric_limits<float>::infinity());
  masked.step_unless(torch::ones({1}));
  EXPECT_TRUE(torch::equal(b, before));
  EXPECT_TRUE(torch::equal(masked.momentum_buffers()[0], buffer));
}
