#include "data/synthetic.hpp"

#include <ATen/Parallel.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/from_blob.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <sstream>
#include <vector>

namespace fs = std::filesystem;

namespace ddp::cifar {
namespace {

// splitmix64: a tiny, fast, well-mixed generator; seeded per (seed, stream, index) so every
// sample is independent of the order and the thread it is generated on.
struct Rng {
  uint64_t state;
  explicit Rng(uint64_t s) : state(s) {}
  uint64_t next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0,1)
  int64_t below(int64_t n) { return static_cast<int64_t>(next() % static_cast<uint64_t>(n)); }
};

uint64_t mix(uint64_t a, uint64_t b) {
  Rng r(a ^ (b * 0xD1B54A32D192ED03ULL));
  r.next();
  return r.next();
}

enum Stream : uint64_t { kProto = 1, kTrain = 2, kTest = 3, kTrainLabels = 4, kTestLabels = 5 };

// A grid x grid random pattern (per channel, +-amp) bilinearly upsampled onto side x side, added
// to out [3, side, side].
void add_octave(Rng& rng, int grid, double amp, int side, float* out) {
  std::vector<double> g(static_cast<size_t>(3 * grid * grid));
  for (auto& v : g) v = (2 * rng.uniform() - 1) * amp;
  const double scale = static_cast<double>(grid - 1) / static_cast<double>(side - 1);
  for (int c = 0; c < 3; ++c) {
    const double* gc = g.data() + static_cast<size_t>(c * grid * grid);
    for (int y = 0; y < side; ++y) {
      const double fy = y * scale;
      const int y0 = std::min(static_cast<int>(fy), grid - 2);
      const double wy = fy - y0;
      for (int x = 0; x < side; ++x) {
        const double fx = x * scale;
        const int x0 = std::min(static_cast<int>(fx), grid - 2);
        const double wx = fx - x0;
        const double v = (1 - wy) * ((1 - wx) * gc[y0 * grid + x0] + wx * gc[y0 * grid + x0 + 1]) +
                         wy * ((1 - wx) * gc[(y0 + 1) * grid + x0] + wx * gc[(y0 + 1) * grid + x0 + 1]);
        out[(c * side + y) * side + x] += static_cast<float>(v);
      }
    }
  }
}

}  // namespace

void validate(const SynthOptions& opt) {
  const auto bad = [](const std::string& m) { throw DataError("synthetic CIFAR-100 data: " + m); };
  if (opt.train < 1 || opt.train > 10'000'000) {
    bad("--train " + std::to_string(opt.train) + " is out of range; allowed: 1..10000000");
  }
  if (opt.test < 1 || opt.test > 10'000'000) {
    bad("--test " + std::to_string(opt.test) + " is out of range; allowed: 1..10000000");
  }
  if (opt.classes < 1 || opt.classes > kFineClasses) {
    bad("--classes " + std::to_string(opt.classes) + " is out of range; allowed: 1..100 (the "
        "format stores fine labels 0-99)");
  }
  if (!(opt.noise >= 0 && opt.noise <= 1)) {
    std::ostringstream m;
    m << "--noise " << opt.noise << " is out of range; allowed: 0..1 (standard deviation as a share "
      << "of the 0-255 pixel range)";
    bad(m.str());
  }
  if (!(opt.mix >= 0 && opt.mix <= 0.5)) {
    std::ostringstream m;
    m << "--mix " << opt.mix << " is out of range; allowed: 0..0.5 (a sample's own class must "
      << "stay dominant)";
    bad(m.str());
  }
  if (opt.max_shift < 0 || opt.max_shift > 16) {
    bad("max_shift " + std::to_string(opt.max_shift) + " is out of range; allowed: 0..16");
  }
}

at::Tensor synthetic_prototypes(const SynthOptions& opt) {
  validate(opt);
  const int side = static_cast<int>(kImageSide + 2 * opt.max_shift);
  at::Tensor protos = at::empty({opt.classes, 3, side, side}, at::kFloat);
  for (int64_t k = 0; k < opt.classes; ++k) {
    Rng rng(mix(mix(opt.seed, kProto), static_cast<uint64_t>(k)));
    float* p = protos[k].data_ptr<float>();
    for (int c = 0; c < 3; ++c) {
      const float base = static_cast<float>(40 + 175 * rng.uniform());
      std::fill(p + c * side * side, p + (c + 1) * side * side, base);
    }
    add_octave(rng, 3, 70, side, p);   // large blobs
    add_octave(rng, 6, 45, side, p);   // finer structure (still smooth at 32x32)
  }
  return protos.clamp_(0, 255);
}

Dataset generate_synthetic(const SynthOptions& opt, bool train) {
  validate(opt);
  const int64_t n = train ? opt.train : opt.test;
  const at::Tensor protos = synthetic_prototypes(opt);
  const int64_t side = kImageSide + 2 * opt.max_shift;
  const float* pr = protos.data_ptr<float>();

  // Balanced labels (each class n/classes times, the remainder to the first classes), shuffled.
  std::vector<int64_t> labels(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) labels[static_cast<size_t>(i)] = i % opt.classes;
  Rng lrng(mix(opt.seed, train ? kTrainLabels : kTestLabels));
  for (int64_t i = n - 1; i > 0; --i) std::swap(labels[static_cast<size_t>(i)], labels[static_cast<size_t>(lrng.below(i + 1))]);

  Dataset d;
  d.labels = at::from_blob(labels.data(), {n}, at::kLong).clone();
  d.images = at::empty({n, kChannels, kImageSide, kImageSide}, at::kByte);
  uint8_t* out = d.images.data_ptr<uint8_t>();
  const uint64_t stream = mix(opt.seed, train ? kTrain : kTest);
  // Noise: the sum of four 16-bit uniforms (Irwin-Hall, close to Gaussian), scaled to opt.noise.
  const float sigma = static_cast<float>(opt.noise * 255.0);
  const float nscale = sigma * std::sqrt(3.0f) / 65536.0f;
  const float noffset = 2.0f * 65536.0f;

  at::parallel_for(0, n, 256, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      Rng rng(mix(stream, static_cast<uint64_t>(i)));
      const int64_t k = labels[static_cast<size_t>(i)];
      const int64_t dy = rng.below(2 * opt.max_shift + 1);
      const int64_t dx = rng.below(2 * opt.max_shift + 1);
      const bool flip = (rng.next() & 1) != 0;
      const int64_t other = rng.below(opt.classes);
      const double a = rng.uniform() * opt.mix;
      const double contrast = 1 + (2 * rng.uniform() - 1) * 0.5;
      const double bright = (2 * rng.uniform() - 1) * 20;
      // v = ((1-a) own + a other - 128) * contrast + 128 + bright + noise
      const float w_own = static_cast<float>((1 - a) * contrast);
      const float w_other = static_cast<float>(a * contrast);
      const float offset = static_cast<float>(128 * (1 - contrast) + bright);
      uint8_t* img = out + i * kPixelBytes;
      for (int64_t c = 0; c < kChannels; ++c) {
        const float* pc = pr + (k * kChannels + c) * side * side;
        const float* po = pr + (other * kChannels + c) * side * side;
        for (int64_t y = 0; y < kImageSide; ++y) {
          const float* row = pc + (y + dy) * side + dx;
          const float* orow = po + (y + dy) * side + dx;
          uint8_t* o = img + (c * kImageSide + y) * kImageSide;
          for (int64_t x = 0; x < kImageSide; ++x) {
            const uint64_t r = rng.next();
            const float u = static_cast<float>((r & 0xFFFF) + ((r >> 16) & 0xFFFF) +
                                               ((r >> 32) & 0xFFFF) + (r >> 48));
            const int64_t sx = flip ? kImageSide - 1 - x : x;
            const float v = w_own * row[sx] + w_other * orow[sx] + offset + (u - noffset) * nscale;
            o[x] = static_cast<uint8_t>(std::clamp(v, 0.0f, 255.0f) + 0.5f);
          }
        }
      }
    }
  });
  return d;
}

std::string write_synthetic(const std::string& out_dir, const SynthOptions& opt) {
  validate(opt);
  const fs::path dir = fs::path(out_dir) / kArchiveDir;
  write_cifar100_file((dir / kTrainFile).string(), generate_synthetic(opt, true));
  write_cifar100_file((dir / kTestFile).string(), generate_synthetic(opt, false));
  return dir.string();
}

}  // namespace ddp::cifar
