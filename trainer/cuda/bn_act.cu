#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <stdexcept>
#include <string>

#include "bn_act.hpp"

namespace ddp::trainer::gpu {
namespace {

// Each thread owns one 16-byte vector of channels and walks down the rows; a block is k whole rows
// wide (k = 256 / vectors per row), so a warp's loads are contiguous and every thread keeps its
// channels' constants in registers for the whole pass.
constexpr int kMaxThreads = 256;
constexpr int kUnroll = 4;  // rows loaded before the first is used: loads in flight

// ---- 16-byte vectors of float, half or bfloat16, converted to float ---------------------------

__device__ __forceinline__ uint32_t word(const uint4& r, int j) {
  return j == 0 ? r.x : j == 1 ? r.y : j == 2 ? r.z : r.w;
}
__device__ __forceinline__ void set_word(uint4& r, int j, uint32_t w) {
  if (j == 0)
    r.x = w;
  else if (j == 1)
    r.y = w;
  else if (j == 2)
    r.z = w;
  else
    r.w = w;
}

template <class T>
struct Bits;
template <>
struct Bits<float> {
  static constexpr int V = 4;
  static __device__ __forceinline__ float get(const uint4& r, int i) {
    return __uint_as_float(word(r, i));
  }
  static __device__ __forceinline__ uint4 pack(const float (&v)[V]) {
    uint4 r;
#pragma unroll
    for (int i = 0; i < V; ++i) set_word(r, i, __float_as_uint(v[i]));
    return r;
  }
  static __device__ __forceinline__ float scalar(float v) { return v; }
};
template <>
struct Bits<__half> {
  static constexpr int V = 8;
  static __device__ __forceinline__ float get(const uint4& r, int i) {
    const uint32_t w = word(r, i >> 1);
    return __half2float(
        __ushort_as_half(static_cast<unsigned short>((i & 1) ? (w >> 16) : (w & 0xFFFFu))));
  }
  static __device__ __forceinline__ uint4 pack(const float (&v)[V]) {
    uint4 r;
#pragma unroll
    for (int j = 0; j < V / 2; ++j)
      set_word(r, j,
               static_cast<uint32_t>(__half_as_ushort(__float2half_rn(v[2 * j]))) |
                   (static_cast<uint32_t>(__half_as_ushort(__float2half_rn(v[2 * j + 1]))) << 16));
    return r;
  }
  static __device__ __forceinline__ float scalar(__half v) { return __half2float(v); }
};
template <>
struct Bits<__nv_bfloat16> {
  static constexpr int V = 8;
  static __device__ __forceinline__ float get(const uint4& r, int i) {
    const uint32_t w = word(r, i >> 1);
    return __bfloat162float(
        __ushort_as_bfloat16(static_cast<unsigned short>((i & 1) ? (w >> 16) : (w & 0xFFFFu))));
  }
  static __device__ __forceinline__ uint4 pack(const float (&v)[V]) {
    uint4 r;
#pragma unroll
    for (int j = 0; j < V / 2; ++j)
      set_word(r, j,
               static_cast<uint32_t>(__bfloat16_as_ushort(__float2bfloat16_rn(v[2 * j]))) |
                   (static_cast<uint32_t>(__bfloat16_as_ushort(__float2bfloat16_rn(v[2 * j + 1])))
                    << 16));
    return r;
  }
  static __device__ __forceinline__ float scalar(__nv_bfloat16 v) { return __bfloat162float(v); }
};

template <class T>
__device__ __forceinline__ uint4 load16(const T* p) {
  return *reinterpret_cast<const uint4*>(p);
}
template <class T>
__device__ __forceinline__ void store16(T* p, const uint4& v) {
  *reinterpret_cast<uint4*>(p) = v;
}

// ---- dropout: Philox4x32-10 keyed by the seed, counted by element --------------------------

__device__ __forceinline__ uint4 philox(uint4 c, uint2 k) {
#pragma unroll
  for (int i = 0; i < 10; ++i) {
    const uint32_t hi0 = __umulhi(0xD2511F53u, c.x), lo0 = 0xD2511F53u * c.x;
    const uint32_t hi1 = __umulhi(0xCD9E8D57u, c.z), lo1 = 0xCD9E8D57u * c.z;
    c = make_uint4(hi1 ^ c.y ^ k.x, lo1, hi0 ^ c.w ^ k.y, lo0);
    k.x += 0x9E3779B9u;
    k.y += 0xBB67AE85u;
  }
  return c;
}

struct Dropout {
  uint2 key;
  uint32_t threshold;  // an element is dropped where its 32-bit draw is below this
  float keep_scale;    // 1 / (1 - p)
};

__device__ __forceinline__ Dropout make_dropout(const int64_t* seed, uint32_t threshold,
                                                float keep_scale) {
  const auto s = static_cast<uint64_t>(*seed);
  return {make_uint2(static_cast<uint32_t>(s), static_cast<uint32_t>(s >> 32)), threshold,
          keep_scale};
}

// The factor (0 or 1/(1-p)) of V consecutive elements from element e0 (a multiple of 4): one
// Philox block per 4 elements, the same in forward and backward.
template <int V>
__device__ __forceinline__ void keep_factors(const Dropout& d, uint64_t e0, float (&f)[V]) {
#pragma unroll
  for (int j = 0; j < V; j += 4) {
    const uint64_t n = (e0 + j) >> 2;
    const uint4 r =
        philox(make_uint4(static_cast<uint32_t>(n), static_cast<uint32_t>(n >> 32), 0u, 0u), d.key);
    f[j] = r.x < d.threshold ? 0.f : d.keep_scale;
    f[j + 1] = r.y < d.threshold ? 0.f : d.keep_scale;
    f[j + 2] = r.z < d.threshold ? 0.f : d.keep_scale;
    f[j + 3] = r.w < d.threshold ? 0.f : d.keep_scale;
  }
}

// ---- the thread's place --------------------------------------------------------------------

struct Place {
  int vectors;  // per row
  int k;        // rows per block
  int cv;       // this thread's vector in the row
  int ry;       // this thread's row in the block
  int64_t first, stride;
};

template <class T>
__device__ __forceinline__ Place place(int64_t channels) {
  Place p;
  p.vectors = static_cast<int>(channels / Bits<T>::V);
  p.k = blockDim.x / p.vectors;
  p.cv = threadIdx.x % p.vectors;
  p.ry = threadIdx.x / p.vectors;
  p.first = static_cast<int64_t>(blockIdx.x) * p.k + p.ry;
  p.stride = static_cast<int64_t>(gridDim.x) * p.k;
  return p;
}

template <int V>
__device__ __forceinline__ void load_channels(const float* src, int cv, float (&out)[V]) {
#pragma unroll
  for (int i = 0; i < V; ++i) out[i] = src[cv * V + i];
}

// Adds the k row groups of a block and writes the block's two partial sums per channel.
template <int V>
__device__ __forceinline__ void store_block_sums(const Place& p, int64_t channels, float (&a)[V],
                                                 float (&b)[V], float* partials) {
  extern __shared__ float shared[];
  float* mine = shared + static_cast<int64_t>(threadIdx.x) * 2 * V;
#pragma unroll
  for (int i = 0; i < V; ++i) {
    mine[i] = a[i];
    mine[V + i] = b[i];
  }
  __syncthreads();
  if (p.ry != 0) return;
  for (int j = 1; j < p.k; ++j) {
    const float* other = shared + static_cast<int64_t>(j * p.vectors + p.cv) * 2 * V;
#pragma unroll
    for (int i = 0; i < V; ++i) {
      a[i] += other[i];
      b[i] += other[V + i];
    }
  }
  float* out = partials + static_cast<int64_t>(blockIdx.x) * 2 * channels + p.cv * V;
#pragma unroll
  for (int i = 0; i < V; ++i) {
    out[i] = a[i];
    out[channels + i] = b[i];
  }
}

// ---- forward -------------------------------------------------------------------------------

// Per channel: sum of (x - x[0]) and of its square, shifted by the first row's value so that the
// variance keeps its precision when the mean is far from zero.
template <class T>
__global__ void __launch_bounds__(kMaxThreads)
    moments_kernel(const T* __restrict__ x, int64_t rows, int64_t channels,
                   float* __restrict__ partials) {
  constexpr int V = Bits<T>::V;
  const Place p = place<T>(channels);
  float shift[V], s[V], q[V];
  const uint4 first = load16(x + p.cv * V);
#pragma unroll
  for (int i = 0; i < V; ++i) {
    shift[i] = Bits<T>::get(first, i);
    s[i] = q[i] = 0.f;
  }
  int64_t r = p.first;
  for (; r + (kUnroll - 1) * p.stride < rows; r += kUnroll * p.stride) {
    uint4 raw[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) raw[u] = load16(x + (r + u * p.stride) * channels + p.cv * V);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
#pragma unroll
      for (int i = 0; i < V; ++i) {
        const float d = Bits<T>::get(raw[u], i) - shift[i];
        s[i] += d;
        q[i] = fmaf(d, d, q[i]);
      }
  }
  for (; r < rows; r += p.stride) {
    const uint4 raw = load16(x + r * channels + p.cv * V);
#pragma unroll
    for (int i = 0; i < V; ++i) {
      const float d = Bits<T>::get(raw, i) - shift[i];
      s[i] += d;
      q[i] = fmaf(d, d, q[i]);
    }
  }
  store_block_sums<V>(p, channels, s, q, partials);
}

// Per channel, in double: the blocks' partial sums -> mean, 1/std, the running statistics
// (unbiased variance, as BatchNorm2d), and the scale and shift that normalisation applies.
// Block (32, 16): 32 channels, 16 threads adding up the blocks' partials.
template <class T>
__global__ void finalize_forward_kernel(const float* __restrict__ partials, int blocks,
                                        const T* __restrict__ x, int64_t rows, int64_t channels,
                                        const float* __restrict__ weight,
                                        const float* __restrict__ bias, float* running_mean,
                                        float* running_var, double momentum, double eps,
                                        float* __restrict__ stats) {
  __shared__ double sums[2][16][33];
  const int64_t c = static_cast<int64_t>(blockIdx.x) * 32 + threadIdx.x;
  double s = 0, q = 0;
  if (c < channels)
    for (int b = threadIdx.y; b < blocks; b += 16) {
      s += partials[(2 * static_cast<int64_t>(b)) * channels + c];
      q += partials[(2 * static_cast<int64_t>(b) + 1) * channels + c];
    }
  sums[0][threadIdx.y][threadIdx.x] = s;
  sums[1][threadIdx.y][threadIdx.x] = q;
  __syncthreads();
  if (threadIdx.y != 0 || c >= channels) return;
  for (int j = 1; j < 16; ++j) {
    s += sums[0][j][threadIdx.x];
    q += sums[1][j][threadIdx.x];
  }
  const double n = static_cast<double>(rows);
  const double shifted_mean = s / n;
  const double var = fmax(q / n - shifted_mean * shifted_mean, 0.0);
  const double mean = static_cast<double>(Bits<T>::scalar(x[c])) + shifted_mean;
  const double invstd = 1.0 / sqrt(var + eps);
  const double unbiased = rows > 1 ? var * n / (n - 1) : var;
  running_mean[c] = static_cast<float>((1 - momentum) * running_mean[c] + momentum * mean);
  running_var[c] = static_cast<float>((1 - momentum) * running_var[c] + momentum * unbiased);
  const float scale = weight[c] * static_cast<float>(invstd);
  stats[c] = static_cast<float>(mean);
  stats[channels + c] = static_cast<float>(invstd);
  stats[2 * channels + c] = scale;
  stats[3 * channels + c] = bias[c] - static_cast<float>(mean) * scale;
}

// y = relu(x * scale + shift) [* dropout factor] [+ residual]
template <class T, bool kDrop, bool kResidual>
__global__ void __launch_bounds__(kMaxThreads)
    apply_kernel(const T* __restrict__ x, const T* __restrict__ residual, T* __restrict__ y,
                 int64_t rows, int64_t channels, const float* __restrict__ stats,
                 const int64_t* __restrict__ seed, uint32_t threshold, float keep_scale) {
  constexpr int V = Bits<T>::V;
  const Place p = place<T>(channels);
  float scale[V], shift[V];
  load_channels<V>(stats + 2 * channels, p.cv, scale);
  load_channels<V>(stats + 3 * channels, p.cv, shift);
  Dropout d{};
  if (kDrop) d = make_dropout(seed, threshold, keep_scale);
  int64_t r = p.first;
  auto one_row = [&](int64_t row, const uint4& xin, const uint4& rin) {
    float out[V];
#pragma unroll
    for (int i = 0; i < V; ++i) {
      const float z = fmaf(Bits<T>::get(xin, i), scale[i], shift[i]);
      out[i] = z > 0.f ? z : 0.f;
    }
    if (kDrop) {
      float f[V];
      keep_factors<V>(d, static_cast<uint64_t>(row * channels + p.cv * V), f);
#pragma unroll
      for (int i = 0; i < V; ++i) out[i] *= f[i];
    }
    if (kResidual) {
#pragma unroll
      for (int i = 0; i < V; ++i) out[i] += Bits<T>::get(rin, i);
    }
    store16(y + row * channels + p.cv * V, Bits<T>::pack(out));
  };
  for (; r + (kUnroll - 1) * p.stride < rows; r += kUnroll * p.stride) {
    uint4 xin[kUnroll], rin[kUnroll] = {};
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int64_t at = (r + u * p.stride) * channels + p.cv * V;
      xin[u] = load16(x + at);
      if (kResidual) rin[u] = load16(residual + at);
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) one_row(r + u * p.stride, xin[u], rin[u]);
  }
  for (; r < rows; r += p.stride) {
    const int64_t at = r * channels + p.cv * V;
    uint4 rin{};
    if (kResidual) rin = load16(residual + at);
    one_row(r, load16(x + at), rin);
  }
}

// ---- backward ------------------------------------------------------------------------------

// The gradient reaching batch norm's output: dy where the ReLU passed, times the dropout factor.
template <class T, bool kDrop, int V>
__device__ __forceinline__ void masked_gradient(const uint4& xin, const uint4& dyin,
                                                const float (&scale)[V], const float (&shift)[V],
                                                const Dropout& d, uint64_t e0, float (&xv)[V],
                                                float (&g)[V]) {
#pragma unroll
  for (int i = 0; i < V; ++i) {
    xv[i] = Bits<T>::get(xin, i);
    const float z = fmaf(xv[i], scale[i], shift[i]);  // forward's very operation
    g[i] = z > 0.f ? Bits<T>::get(dyin, i) : 0.f;
  }
  if (kDrop) {
    float f[V];
    keep_factors<V>(d, e0, f);
#pragma unroll
    for (int i = 0; i < V; ++i) g[i] *= f[i];
  }
}

// Per channel: sum of g and of g * (x - mean).
template <class T, bool kDrop>
__global__ void __launch_bounds__(kMaxThreads)
    grad_moments_kernel(const T* __restrict__ x, const T* __restrict__ dy, int64_t rows,
                        int64_t channels, const float* __restrict__ stats,
                        const int64_t* __restrict__ seed, uint32_t threshold, float keep_scale,
                        float* __restrict__ partials) {
  constexpr int V = Bits<T>::V;
  const Place p = place<T>(channels);
  float mean[V], scale[V], shift[V], sg[V], sgx[V];
  load_channels<V>(stats, p.cv, mean);
  load_channels<V>(stats + 2 * channels, p.cv, scale);
  load_channels<V>(stats + 3 * channels, p.cv, shift);
#pragma unroll
  for (int i = 0; i < V; ++i) sg[i] = sgx[i] = 0.f;
  Dropout d{};
  if (kDrop) d = make_dropout(seed, threshold, keep_scale);
  auto one_row = [&](int64_t row, const uint4& xin, const uint4& dyin) {
    float xv[V], g[V];
    masked_gradient<T, kDrop, V>(xin, dyin, scale, shift, d,
                                 static_cast<uint64_t>(row * channels + p.cv * V), xv, g);
#pragma unroll
    for (int i = 0; i < V; ++i) {
      sg[i] += g[i];
      sgx[i] = fmaf(g[i], xv[i] - mean[i], sgx[i]);
    }
  };
  int64_t r = p.first;
  for (; r + (kUnroll - 1) * p.stride < rows; r += kUnroll * p.stride) {
    uint4 xin[kUnroll], dyin[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int64_t at = (r + u * p.stride) * channels + p.cv * V;
      xin[u] = load16(x + at);
      dyin[u] = load16(dy + at);
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) one_row(r + u * p.stride, xin[u], dyin[u]);
  }
  for (; r < rows; r += p.stride) {
    const int64_t at = r * channels + p.cv * V;
    one_row(r, load16(x + at), load16(dy + at));
  }
  store_block_sums<V>(p, channels, sg, sgx, partials);
}

// Per channel, in double: grad_bias = sum g, grad_weight = sum g (x - mean) / std, and the three
// coefficients of dx = g k1 - k2 - (x - mean) k3.
__global__ void finalize_backward_kernel(const float* __restrict__ partials, int blocks,
                                         int64_t rows, int64_t channels,
                                         const float* __restrict__ weight,
                                         const float* __restrict__ stats,
                                         float* __restrict__ coefficients,
                                         float* __restrict__ grad_weight,
                                         float* __restrict__ grad_bias) {
  __shared__ double sums[2][16][33];
  const int64_t c = static_cast<int64_t>(blockIdx.x) * 32 + threadIdx.x;
  double sg = 0, sgx = 0;
  if (c < channels)
    for (int b = threadIdx.y; b < blocks; b += 16) {
      sg += partials[(2 * static_cast<int64_t>(b)) * channels + c];
      sgx += partials[(2 * static_cast<int64_t>(b) + 1) * channels + c];
    }
  sums[0][threadIdx.y][threadIdx.x] = sg;
  sums[1][threadIdx.y][threadIdx.x] = sgx;
  __syncthreads();
  if (threadIdx.y != 0 || c >= channels) return;
  for (int j = 1; j < 16; ++j) {
    sg += sums[0][j][threadIdx.x];
    sgx += sums[1][j][threadIdx.x];
  }
  const double n = static_cast<double>(rows);
  const double invstd = stats[channels + c];
  const double gw = sgx * invstd;
  const double k1 = static_cast<double>(weight[c]) * invstd;
  grad_bias[c] = static_cast<float>(sg);
  grad_weight[c] = static_cast<float>(gw);
  coefficients[c] = static_cast<float>(k1);
  coefficients[channels + c] = static_cast<float>(k1 * sg / n);
  coefficients[2 * channels + c] = static_cast<float>(k1 * invstd * gw / n);
}

template <class T, bool kDrop>
__global__ void __launch_bounds__(kMaxThreads)
    grad_input_kernel(const T* __restrict__ x, const T* __restrict__ dy, T* __restrict__ dx,
                      int64_t rows, int64_t channels, const float* __restrict__ stats,
                      const float* __restrict__ coefficients, const int64_t* __restrict__ seed,
                      uint32_t threshold, float keep_scale) {
  constexpr int V = Bits<T>::V;
  const Place p = place<T>(channels);
  float mean[V], scale[V], shift[V], k1[V], k2[V], k3[V];
  load_channels<V>(stats, p.cv, mean);
  load_channels<V>(stats + 2 * channels, p.cv, scale);
  load_channels<V>(stats + 3 * channels, p.cv, shift);
  load_channels<V>(coefficients, p.cv, k1);
  load_channels<V>(coefficients + channels, p.cv, k2);
  load_channels<V>(coefficients + 2 * channels, p.cv, k3);
  Dropout d{};
  if (kDrop) d = make_dropout(seed, threshold, keep_scale);
  auto one_row = [&](int64_t row, const uint4& xin, const uint4& dyin) {
    float xv[V], g[V], out[V];
    masked_gradient<T, kDrop, V>(xin, dyin, scale, shift, d,
                                 static_cast<uint64_t>(row * channels + p.cv * V), xv, g);
#pragma unroll
    for (int i = 0; i < V; ++i) out[i] = g[i] * k1[i] - k2[i] - (xv[i] - mean[i]) * k3[i];
    store16(dx + row * channels + p.cv * V, Bits<T>::pack(out));
  };
  int64_t r = p.first;
  for (; r + (kUnroll - 1) * p.stride < rows; r += kUnroll * p.stride) {
    uint4 xin[kUnroll], dyin[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int64_t at = (r + u * p.stride) * channels + p.cv * V;
      xin[u] = load16(x + at);
      dyin[u] = load16(dy + at);
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) one_row(r + u * p.stride, xin[u], dyin[u]);
  }
  for (; r < rows; r += p.stride) {
    const int64_t at = r * channels + p.cv * V;
    one_row(r, load16(x + at), load16(dy + at));
  }
}

// ---- launch --------------------------------------------------------------------------------

void check(const char* what) {
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess)
    throw std::runtime_error(std::string("fused batch norm: ") + what + ": " +
                             cudaGetErrorString(e));
}

int multiprocessors() {
  static std::atomic<int> cached[64];
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) check("cudaGetDevice");
  if (device >= 0 && device < 64)
    if (const int n = cached[device].load(std::memory_order_relaxed)) return n;
  int n = 0;
  if (cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, device) != cudaSuccess)
    check("cudaDeviceGetAttribute");
  if (device >= 0 && device < 64) cached[device].store(n, std::memory_order_relaxed);
  return n;
}

int vector_elements(Element t) { return t == Element::Float ? 4 : 8; }

struct Shape {
  int threads, k;
};

Shape shape(Element t, int64_t channels) {
  const int vectors = static_cast<int>(channels / vector_elements(t));
  const int k = std::max(1, kMaxThreads / vectors);
  return {vectors * k, k};
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Blocks of the reductions: each thread adds at least 32 rows (fewer partials to add up for small
// maps), at most 4 blocks per multiprocessor.
int moment_blocks(Element t, int64_t rows, int64_t channels) {
  const Shape s = shape(t, channels);
  return static_cast<int>(
      std::clamp<int64_t>(ceil_div(rows, int64_t{s.k} * 32), 1, int64_t{multiprocessors()} * 4));
}

int apply_blocks(Element t, int64_t rows, int64_t channels) {
  const Shape s = shape(t, channels);
  return static_cast<int>(std::clamp<int64_t>(ceil_div(rows, int64_t{s.k} * kUnroll), 1,
                                              int64_t{multiprocessors()} * 8));
}

uint32_t drop_threshold(double p) {
  const double t = p * 4294967296.0;
  return t >= 4294967295.0 ? 4294967295u : static_cast<uint32_t>(t);
}

template <class F>
void dispatch(Element t, F&& f) {
  switch (t) {
    case Element::Float:
      f(float{});
      break;
    case Element::Half:
      f(__half{});
      break;
    case Element::BFloat16:
      f(__nv_bfloat16{});
      break;
  }
}

template <class T>
void forward_typed(const BnActForward& a) {
  constexpr int V = Bits<T>::V;
  const Shape s = shape(a.type, a.channels);
  const auto stream = static_cast<cudaStream_t>(a.stream);
  const auto* x = static_cast<const T*>(a.x);
  const auto* res = static_cast<const T*>(a.residual);
  auto* y = static_cast<T*>(a.y);
  const int mb = moment_blocks(a.type, a.rows, a.channels);
  const size_t shared = static_cast<size_t>(s.threads) * 2 * V * sizeof(float);
  moments_kernel<T><<<mb, s.threads, shared, stream>>>(x, a.rows, a.channels, a.partials);
  check("statistics");
  finalize_forward_kernel<T>
      <<<static_cast<unsigned>(ceil_div(a.channels, 32)), dim3(32, 16), 0, stream>>>(
          a.partials, mb, x, a.rows, a.channels, a.weight, a.bias, a.running_mean, a.running_var,
          a.momentum, a.eps, a.stats);
  check("statistics (finalize)");
  const int ab = apply_blocks(a.type, a.rows, a.channels);
  const uint32_t th = drop_threshold(a.dropout);
  const auto ks = static_cast<float>(1.0 / (1.0 - a.dropout));
  const bool drop = a.dropout > 0, residual = res != nullptr;
  if (drop && residual)
    apply_kernel<T, true, true>
        <<<ab, s.threads, 0, stream>>>(x, res, y, a.rows, a.channels, a.stats, a.seed, th, ks);
  else if (drop)
    apply_kernel<T, true, false>
        <<<ab, s.threads, 0, stream>>>(x, res, y, a.rows, a.channels, a.stats, a.seed, th, ks);
  else if (residual)
    apply_kernel<T, false, true>
        <<<ab, s.threads, 0, stream>>>(x, res, y, a.rows, a.channels, a.stats, a.seed, th, ks);
  else
    apply_kernel<T, false, false>
        <<<ab, s.threads, 0, stream>>>(x, res, y, a.rows, a.channels, a.stats, a.seed, th, ks);
  check("normalize");
}

template <class T>
void backward_typed(const BnActBackward& a) {
  constexpr int V = Bits<T>::V;
  const Shape s = shape(a.type, a.channels);
  const auto stream = static_cast<cudaStream_t>(a.stream);
  const auto* x = static_cast<const T*>(a.x);
  const auto* dy = static_cast<const T*>(a.dy);
  auto* dx = static_cast<T*>(a.dx);
  const int mb = moment_blocks(a.type, a.rows, a.channels);
  const size_t shared = static_cast<size_t>(s.threads) * 2 * V * sizeof(float);
  const uint32_t th = drop_threshold(a.dropout);
  const auto ks = static_cast<float>(1.0 / (1.0 - a.dropout));
  if (a.dropout > 0)
    grad_moments_kernel<T, true><<<mb, s.threads, shared, stream>>>(
        x, dy, a.rows, a.channels, a.stats, a.seed, th, ks, a.partials);
  else
    grad_moments_kernel<T, false><<<mb, s.threads, shared, stream>>>(
        x, dy, a.rows, a.channels, a.stats, a.seed, th, ks, a.partials);
  check("gradient sums");
  finalize_backward_kernel<<<static_cast<unsigned>(ceil_div(a.channels, 32)), dim3(32, 16), 0,
                             stream>>>(a.partials, mb, a.rows, a.channels, a.weight, a.stats,
                                       a.coefficients, a.grad_weight, a.grad_bias);
  check("gradient sums (finalize)");
  const int ab = apply_blocks(a.type, a.rows, a.channels);
  if (a.dropout > 0)
    grad_input_kernel<T, true><<<ab, s.threads, 0, stream>>>(x, dy, dx, a.rows, a.channels, a.stats,
                                                             a.coefficients, a.seed, th, ks);
  else
    grad_input_kernel<T, false><<<ab, s.threads, 0, stream>>>(
        x, dy, dx, a.rows, a.channels, a.stats, a.coefficients, a.seed, th, ks);
  check("input gradient");
}

}  // namespace

bool bn_act_supports(Element type, int64_t channels) {
  const int v = vector_elements(type);
  return channels > 0 && channels % v == 0 && channels / v <= kMaxThreads;
}

int64_t bn_act_partials(Element type, int64_t rows, int64_t channels) {
  return int64_t{moment_blocks(type, rows, channels)} * 2 * channels;
}

void bn_act_forward(const BnActForward& a) {
  dispatch(a.type, [&](auto tag) { forward_typed<decltype(tag)>(a); });
}

void bn_act_backward(const BnActBackward& a) {
  dispatch(a.type, [&](auto tag) { backward_typed<decltype(tag)>(a); });
}

}  // namespace ddp::trainer::gpu
