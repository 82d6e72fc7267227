// The GPU kernels behind the fused batch norm of the trainer's cbr layers: batch norm with batch
// statistics (training), then ReLU, then optionally dropout and a residual add, over a
// channels_last activation seen as a [rows = N*H*W] x [channels] matrix, channels fastest.
//
// Why: on the GPU these layers are bound by memory traffic, not arithmetic. As separate native
// operations (batch norm, ReLU, dropout, residual add) a block's two cbr layers read and write its
// activation about 34 times per step, forward and backward, by our count; fused, 17. The forward reads x twice
// (statistics, then normalise) and writes y once; the backward reads x and dy twice and writes dx
// once. Neither the ReLU output nor a dropout mask is kept: backward recomputes the ReLU mask from
// x with the very same float operations, and the dropout mask from a counter-based generator
// (Philox4x32-10) keyed by a seed the caller drew from Torch's generator on the device, so the
// whole step stays capturable in a CUDA graph.
//
// This header has no CUDA types, so the C++ side compiles with the host compiler alone.
#pragma once

#include <cstdint>

namespace ddp::trainer::gpu {

enum class Element { Float, Half, BFloat16 };

// Whether the kernels take this many channels of this element type: rows are read in 16-byte
// vectors, so channels must fill whole vectors, and one block spans a row (at most 256 vectors).
bool bn_act_supports(Element type, int64_t channels);

// Floats of the workspace for per-block partial sums that both passes need.
int64_t bn_act_partials(Element type, int64_t rows, int64_t channels);

struct BnActForward {
  Element type = Element::Float;
  const void* x = nullptr;
  const void* residual = nullptr;  // null: no residual add
  void* y = nullptr;
  int64_t rows = 0, channels = 0;
  const float* weight = nullptr;
  const float* bias = nullptr;
  float* running_mean = nullptr;
  float* running_var = nullptr;
  double momentum = 0.1, eps = 1e-5;
  double dropout = 0;             // probability; 0: no dropout
  const int64_t* seed = nullptr;  // on the device; read only when dropout > 0
  float* partials = nullptr;      // bn_act_partials floats
  float* stats = nullptr;         // [4][channels], written: mean, 1/std, scale, shift
  void* stream = nullptr;         // cudaStream_t
};
void bn_act_forward(const BnActForward& a);

struct BnActBackward {
  Element type = Element::Float;
  const void* x = nullptr;
  const void* dy = nullptr;
  void* dx = nullptr;
  int64_t rows = 0, channels = 0;
  const float* weight = nullptr;
  const float* stats = nullptr;  // as the forward wrote them
  double dropout = 0;
  const int64_t* seed = nullptr;
  float* partials = nullptr;
  float* coefficients = nullptr;  // [3][channels] workspace
  float* grad_weight = nullptr;
  float* grad_bias = nullptr;
  void* stream = nullptr;
};
void bn_act_backward(const BnActBackward& a);

}  // namespace ddp::trainer::gpu
