#include "bn_relu.hpp"

#include <ATen/Parallel.h>

#include <cmath>
#include <vector>

// This file is compiled with -ffp-contract=off: backward recomputes ReLU's mask from the input
// with the same multiply and add as forward, and fusing either into an FMA could flip it.
// (And with -O3 -fno-trapping-math, so that GCC vectorizes the masked loops: see CMakeLists.txt.)
namespace ddp::trainer {
namespace {

// The loops below are memory-bound passes over an [rows x channels] float matrix (channels_last
// activations). One clone per vector width, picked at load time, since the build's baseline
// (x86-64) would leave AVX-512 machines with 128-bit vectors.
#define DDP_VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))

inline float pre_activation(float x, float scale, float shift) { return x * scale + shift; }

// s[c] += x - k[c], q[c] += (x - k[c])^2: moments shifted by a sample value of each channel, in
// double, so the variance keeps its precision when the mean is far from zero.
DDP_VECTOR_CLONES
void shifted_moments(const float* __restrict__ x, int64_t rows, int64_t channels,
                     const float* __restrict__ k, double* __restrict__ s, double* __restrict__ q) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = x + r * channels;
    for (int64_t c = 0; c < channels; ++c) {
      const double d = static_cast<double>(row[c]) - static_cast<double>(k[c]);
      s[c] += d;
      q[c] += d * d;
    }
  }
}

DDP_VECTOR_CLONES
void normalize_relu(const float* __restrict__ x, int64_t rows, int64_t channels,
                    const float* __restrict__ scale, const float* __restrict__ shift,
                    float* __restrict__ y) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* in = x + r * channels;
    float* out = y + r * channels;
    for (int64_t c = 0; c < channels; ++c) {
      const float z = pre_activation(in[c], scale[c], shift[c]);
      out[c] = z > 0.0f ? z : 0.0f;
    }
  }
}

// With g = dy where the ReLU passed, else 0: sg[c] += g, sgx[c] += g * (x - mean[c]).
DDP_VECTOR_CLONES
void gradient_moments(const float* __restrict__ x, const float* __restrict__ dy, int64_t rows,
                      int64_t channels, const float* __restrict__ scale,
                      const float* __restrict__ shift, const float* __restrict__ mean,
                      double* __restrict__ sg, double* __restrict__ sgx) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* in = x + r * channels;
    const float* grad = dy + r * channels;
    for (int64_t c = 0; c < channels; ++c) {
      const float g = pre_activation(in[c], scale[c], shift[c]) > 0.0f ? grad[c] : 0.0f;
      const float gx = g * (in[c] - mean[c]);
      sg[c] += g;
      sgx[c] += gx;
    }
  }
}

// dx = g * k1 - k2 - (x - mean) * k3: batch norm's input gradient after ReLU's mask.
DDP_VECTOR_CLONES
void input_gradient(const float* __restrict__ x, const float* __restrict__ dy, int64_t rows,
                    int64_t channels, const float* __restrict__ scale,
                    const float* __restrict__ shift, const float* __restrict__ mean,
                    const float* __restrict__ k1, const float* __restrict__ k2,
                    const float* __restrict__ k3, float* __restrict__ dx) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* in = x + r * channels;
    const float* grad = dy + r * channels;
    float* out = dx + r * channels;
    for (int64_t c = 0; c < channels; ++c) {
      const float g = pre_activation(in[c], scale[c], shift[c]) > 0.0f ? grad[c] : 0.0f;
      out[c] = g * k1[c] - k2[c] - (in[c] - mean[c]) * k3[c];
    }
  }
}

constexpr int64_t kGrainRows = 256;

// Per-channel sums of a row-wise accumulation, run in parallel with one pair of double
// accumulators per thread, then added up. Returns {first, second} as double tensors [channels].
template <class Accumulate>
std::pair<torch::Tensor, torch::Tensor> channel_sums(int64_t rows, int64_t channels,
                                                     const Accumulate& accumulate) {
  const int threads = at::get_num_threads();
  std::vector<double> partial(static_cast<size_t>(threads) * 2 * channels, 0.0);
  at::parallel_for(0, rows, kGrainRows, [&](int64_t begin, int64_t end) {
    double* mine = partial.data() + static_cast<size_t>(at::get_thread_num()) * 2 * channels;
    accumulate(begin, end - begin, mine, mine + channels);
  });
  auto first = torch::zeros({channels}, torch::kDouble);
  auto second = torch::zeros({channels}, torch::kDouble);
  double* f = first.data_ptr<double>();
  double* s = second.data_ptr<double>();
  for (int t = 0; t < threads; ++t)
    for (int64_t c = 0; c < channels; ++c) {
      f[c] += partial[(static_cast<size_t>(t) * 2) * channels + c];
      s[c] += partial[(static_cast<size_t>(t) * 2 + 1) * channels + c];
    }
  return {first, second};
}

const float* floats(const torch::Tensor& t) { return t.data_ptr<float>(); }

struct BatchNormReluFunction : torch::autograd::Function<BatchNormReluFunction> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x,
                               const torch::Tensor& weight, const torch::Tensor& bias,
                               torch::Tensor running_mean, torch::Tensor running_var,
                               double momentum, double eps) {
    const int64_t channels = x.size(1);
    const int64_t rows = x.numel() / channels;
    const float* in = floats(x);
    const auto k = x.select(0, 0).select(1, 0).select(1, 0).contiguous();  // first pixel's values
    const auto [s, q] =
        channel_sums(rows, channels, [&](int64_t r0, int64_t n, double* a, double* b) {
          shifted_moments(in + r0 * channels, n, channels, floats(k), a, b);
        });
    const auto shifted_mean = s / static_cast<double>(rows);
    const auto var = (q / static_cast<double>(rows) - shifted_mean * shifted_mean).clamp_min(0);
    const auto mean = (shifted_mean + k.to(torch::kDouble)).to(torch::kFloat);
    const auto invstd = (var + eps).rsqrt().to(torch::kFloat);
    {
      torch::NoGradGuard no_grad;
      const double unbiased = rows > 1 ? static_cast<double>(rows) / (rows - 1) : 1.0;
      running_mean.mul_(1 - momentum).add_(mean, momentum);
      running_var.mul_(1 - momentum).add_(var.to(torch::kFloat) * unbiased, momentum);
    }
    const auto scale = weight.detach() * invstd;
    const auto shift = bias.detach() - mean * scale;
    auto y = torch::empty_like(x, at::MemoryFormat::ChannelsLast);
    float* out = y.data_ptr<float>();
    at::parallel_for(0, rows, kGrainRows, [&](int64_t begin, int64_t end) {
      normalize_relu(in + begin * channels, end - begin, channels, floats(scale), floats(shift),
                     out + begin * channels);
    });
    ctx->save_for_backward({x, weight, mean, invstd, scale, shift});
    return y;
  }

  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx,
                                               torch::autograd::tensor_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto &x = saved[0], &weight = saved[1], &mean = saved[2], &invstd = saved[3],
               &scale = saved[4], &shift = saved[5];
    const auto dy = grads[0].contiguous(at::MemoryFormat::ChannelsLast);
    const int64_t channels = x.size(1);
    const int64_t rows = x.numel() / channels;
    const float *in = floats(x), *grad = floats(dy);
    const auto [sg, sgx] =
        channel_sums(rows, channels, [&](int64_t r0, int64_t n, double* a, double* b) {
          gradient_moments(in + r0 * channels, grad + r0 * channels, n, channels, floats(scale),
                           floats(shift), floats(mean), a, b);
        });
    const auto grad_bias = sg.to(torch::kFloat);
    const auto grad_weight = (sgx * invstd.to(torch::kDouble)).to(torch::kFloat);
    const auto k1 = weight.detach() * invstd;
    const auto k2 = k1 * grad_bias / static_cast<double>(rows);
    const auto k3 = k1 * invstd * grad_weight / static_cast<double>(rows);
    auto dx = torch::empty_like(x, at::MemoryFormat::ChannelsLast);
    float* out = dx.data_ptr<float>();
    at::parallel_for(0, rows, kGrainRows, [&](int64_t begin, int64_t end) {
      input_gradient(in + begin * channels, grad + begin * channels, end - begin, channels,
                     floats(scale), floats(shift), floats(mean), floats(k1), floats(k2), floats(k3),
                     out + begin * channels);
    });
    return {dx,
            grad_weight,
            grad_bias,
            torch::Tensor(),
            torch::Tensor(),
            torch::Tensor(),
            torch::Tensor()};
  }
};

}  // namespace

bool fused_batch_norm_relu_applies(const torch::nn::BatchNorm2d& bn, const torch::Tensor& x) {
  const auto& o = bn->options;
  return bn->is_training() && o.affine() && o.track_running_stats() && o.momentum().has_value() &&
         x.device().is_cpu() && x.scalar_type() == torch::kFloat && x.dim() == 4 &&
         x.size(0) * x.size(2) * x.size(3) > 1 && x.is_contiguous(at::MemoryFormat::ChannelsLast) &&
         bn->weight.scalar_type() == torch::kFloat && bn->weight.is_contiguous() &&
         bn->bias.is_contiguous();
}

torch::Tensor batch_norm_relu(torch::nn::BatchNorm2d& bn, const torch::Tensor& x) {
  // ReLU in place on the batch norm's fresh output, as torchvision's ResNets do: batch norm's
  // backward does not read its output.
  if (!fused_batch_norm_relu_applies(bn, x)) return bn->forward(x).relu_();
  // As BatchNorm2d's forward does in training: counts batches for checkpoints and momentum=None.
  bn->num_batches_tracked.add_(1);
  return BatchNormReluFunction::apply(x, bn->weight, bn->bias, bn->running_mean, bn->running_var,
                                      *bn->options.momentum(), bn->options.eps());
}

}  // namespace ddp::trainer
