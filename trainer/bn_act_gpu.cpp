#include "bn_act_gpu.hpp"

#include <stdexcept>

#ifdef DDP_TRAINER_CUDA_KERNELS
#include <c10/cuda/CUDAStream.h>

#include <cstdint>
#include <limits>
#include <optional>

#include "cuda/bn_act.hpp"
#endif

namespace ddp::trainer {

#ifdef DDP_TRAINER_CUDA_KERNELS
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::tensor_list;

std::optional<gpu::Element> element_of(torch::ScalarType t) {
  switch (t) {
    case torch::kFloat:
      return gpu::Element::Float;
    case torch::kHalf:
      return gpu::Element::Half;
    case torch::kBFloat16:
      return gpu::Element::BFloat16;
    default:
      return std::nullopt;
  }
}

// The kernels read and write whole 16-byte vectors.
bool aligned(const torch::Tensor& t) {
  return reinterpret_cast<std::uintptr_t>(t.data_ptr()) % 16 == 0;
}

bool activation_ok(const torch::Tensor& t) {
  return t.defined() && t.is_cuda() && t.dim() == 4 &&
         t.is_contiguous(at::MemoryFormat::ChannelsLast) && element_of(t.scalar_type()) &&
         aligned(t);
}

bool channel_vector_ok(const torch::Tensor& t, const torch::Tensor& x) {
  return t.defined() && t.device() == x.device() && t.scalar_type() == torch::kFloat &&
         t.dim() == 1 && t.size(0) == x.size(1) && t.is_contiguous();
}

void* stream_of(const torch::Tensor& t) {
  return c10::cuda::getCurrentCUDAStream(t.device().index()).stream();
}

torch::Tensor floats(const torch::Tensor& like, at::IntArrayRef sizes) {
  return torch::empty(sizes, like.options().dtype(torch::kFloat));
}

// As channels_last vectors of x's dtype, 16-byte aligned: how the kernels read a gradient.
torch::Tensor like_activation(torch::Tensor t, const torch::Tensor& x) {
  if (t.scalar_type() != x.scalar_type()) t = t.to(x.scalar_type());
  t = t.contiguous(at::MemoryFormat::ChannelsLast);
  if (!aligned(t)) t = t.clone(at::MemoryFormat::ChannelsLast);
  return t;
}

torch::Tensor run_forward(AutogradContext* ctx, const torch::Tensor& x, const torch::Tensor& weight,
                          const torch::Tensor& bias, const torch::Tensor& residual,
                          torch::Tensor& running_mean, torch::Tensor& running_var, double momentum,
                          double eps, double p) {
  const int64_t channels = x.size(1), rows = x.numel() / channels;
  gpu::BnActForward a;
  a.type = *element_of(x.scalar_type());
  // The seed of this call's dropout mask, drawn on the device: under graph replay each step draws
  // a fresh one, and backward regenerates the same mask from it.
  const auto seed = p > 0 ? torch::randint(std::numeric_limits<int64_t>::max(), {1},
                                           x.options().dtype(torch::kLong))
                          : torch::empty({0}, x.options().dtype(torch::kLong));
  auto stats = floats(x, {4, channels});
  auto partials = floats(x, {gpu::bn_act_partials(a.type, rows, channels)});
  auto y = torch::empty_like(x, at::MemoryFormat::ChannelsLast);
  a.x = x.data_ptr();
  a.residual = residual.defined() ? residual.data_ptr() : nullptr;
  a.y = y.data_ptr();
  a.rows = rows;
  a.channels = channels;
  a.weight = weight.data_ptr<float>();
  a.bias = bias.data_ptr<float>();
  a.running_mean = running_mean.data_ptr<float>();
  a.running_var = running_var.data_ptr<float>();
  a.momentum = momentum;
  a.eps = eps;
  a.dropout = p;
  a.seed = p > 0 ? seed.data_ptr<int64_t>() : nullptr;
  a.partials = partials.data_ptr<float>();
  a.stats = stats.data_ptr<float>();
  a.stream = stream_of(x);
  gpu::bn_act_forward(a);
  ctx->save_for_backward({x, weight, stats, seed});
  ctx->saved_data["p"] = p;
  return y;
}

struct Gradients {
  torch::Tensor dx, weight, bias, dy;
};

Gradients run_backward(AutogradContext* ctx, const torch::Tensor& grad) {
  const auto saved = ctx->get_saved_variables();
  const auto &x = saved[0], &weight = saved[1], &stats = saved[2], &seed = saved[3];
  const double p = ctx->saved_data["p"].toDouble();
  if (!grad.defined()) return {};
  const auto dy = like_activation(grad, x);
  const int64_t channels = x.size(1), rows = x.numel() / channels;
  Gradients g;
  g.dy = dy;
  g.dx = torch::empty_like(x, at::MemoryFormat::ChannelsLast);
  g.weight = floats(x, {channels});
  g.bias = floats(x, {channels});
  auto coefficients = floats(x, {3, channels});
  gpu::BnActBackward a;
  a.type = *element_of(x.scalar_type());
  auto partials = floats(x, {gpu::bn_act_partials(a.type, rows, channels)});
  a.x = x.data_ptr();
  a.dy = dy.data_ptr();
  a.dx = g.dx.data_ptr();
  a.rows = rows;
  a.channels = channels;
  a.weight = weight.data_ptr<float>();
  a.stats = stats.data_ptr<float>();
  a.dropout = p;
  a.seed = p > 0 ? seed.data_ptr<int64_t>() : nullptr;
  a.partials = partials.data_ptr<float>();
  a.coefficients = coefficients.data_ptr<float>();
  a.grad_weight = g.weight.data_ptr<float>();
  a.grad_bias = g.bias.data_ptr<float>();
  a.stream = stream_of(x);
  gpu::bn_act_backward(a);
  return g;
}

// Two autograd functions, with and without the residual input: an undefined tensor is never
// passed as an input.
struct BnAct : torch::autograd::Function<BnAct> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x,
                               const torch::Tensor& weight, const torch::Tensor& bias,
                               torch::Tensor running_mean, torch::Tensor running_var,
                               double momentum, double eps, double p) {
    return run_forward(ctx, x, weight, bias, {}, running_mean, running_var, momentum, eps, p);
  }
  static tensor_list backward(AutogradContext* ctx, tensor_list grads) {
    const Gradients g = run_backward(ctx, grads[0]);
    return {g.dx, g.weight, g.bias, {}, {}, {}, {}, {}};
  }
};

struct BnActAdd : torch::autograd::Function<BnActAdd> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x,
                               const torch::Tensor& weight, const torch::Tensor& bias,
                               const torch::Tensor& residual, torch::Tensor running_mean,
                               torch::Tensor running_var, double momentum, double eps, double p) {
    return run_forward(ctx, x, weight, bias, residual, running_mean, running_var, momentum, eps, p);
  }
  static tensor_list backward(AutogradContext* ctx, tensor_list grads) {
    const Gradients g = run_backward(ctx, grads[0]);
    // d(y)/d(residual) is the identity.
    return {g.dx, g.weight, g.bias, g.dy, {}, {}, {}, {}, {}};
  }
};

}  // namespace

bool gpu_bn_act_built() { return true; }

bool gpu_bn_act_applies(const torch::nn::BatchNorm2d& bn, const torch::Tensor& x,
                        const torch::Tensor& residual) {
  const auto& o = bn->options;
  if (!bn->is_training() || !o.affine() || !o.track_running_stats() || !o.momentum().has_value())
    return false;
  if (!activation_ok(x) || !gpu::bn_act_supports(*element_of(x.scalar_type()), x.size(1)) ||
      x.numel() / x.size(1) < 2)
    return false;
  for (const auto* t : {&bn->weight, &bn->bias, &bn->running_mean, &bn->running_var})
    if (!channel_vector_ok(*t, x)) return false;
  if (residual.defined() &&
      (!activation_ok(residual) || residual.scalar_type() != x.scalar_type() ||
       residual.sizes() != x.sizes() || residual.device() != x.device()))
    return false;
  return true;
}

torch::Tensor gpu_batch_norm_relu(torch::nn::BatchNorm2d& bn, const torch::Tensor& x,
                                  double dropout, const torch::Tensor& residual) {
  if (!gpu_bn_act_applies(bn, x, residual))
    throw std::invalid_argument("gpu_batch_norm_relu: not for this module or input");
  // As BatchNorm2d's forward does in training.
  bn->num_batches_tracked.add_(1);
  const double momentum = *bn->options.momentum(), eps = bn->options.eps();
  if (residual.defined())
    return BnActAdd::apply(x, bn->weight, bn->bias, residual, bn->running_mean, bn->running_var,
                           momentum, eps, dropout);
  return BnAct::apply(x, bn->weight, bn->bias, bn->running_mean, bn->running_var, momentum, eps,
                      dropout);
}

#else

bool gpu_bn_act_built() { return false; }

bool gpu_bn_act_applies(const torch::nn::BatchNorm2d&, const torch::Tensor&, const torch::Tensor&) {
  return false;
}

torch::Tensor gpu_batch_norm_relu(torch::nn::BatchNorm2d&, const torch::Tensor&, double,
                                  const torch::Tensor&) {
  throw std::logic_error("gpu_batch_norm_relu: this build has no GPU kernels");
}

#endif

}  // namespace ddp::trainer
