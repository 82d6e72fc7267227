#pragma once
// Synthetic data in the CIFAR-100 binary format, with learnable class structure, for tests and
// benchmarks that must not depend on the internet. Each class has a smooth random prototype
// image (two octaves of random low-resolution patterns, bilinearly upsampled, on a per-class base
// colour); each sample is its class prototype blended with a random other class's prototype
// (weight below `mix`, so its own class stays dominant), seen through a random window (a shift of
// up to max_shift pixels), randomly mirrored, with random contrast (x0.5..1.5) and brightness
// (+-20) and per-pixel noise. A small CNN trained with flip+crop augmentation gets far above chance
// (1/classes) within a few epochs but not at once: a nearest-class-mean classifier on 8x8 pixels
// reaches about 55% on 100 classes. The output depends only on the options (not on the thread count or the LibTorch
// version): the generator uses its own counter-based random numbers.
#include <cstdint>
#include <string>

#include "data/cifar_format.hpp"

namespace ddp::cifar {

struct SynthOptions {
  int64_t train = 50000;   // images in train.bin
  int64_t test = 10000;    // images in test.bin
  int64_t classes = 100;   // labels 0..classes-1 (1..100), balanced
  uint64_t seed = 0;
  double noise = 0.15;     // standard deviation of the per-pixel noise, as a share of 0..255
  double mix = 0.5;        // largest weight of the blended-in other class (0..0.5)
  int64_t max_shift = 3;   // each sample's window is shifted by up to this many pixels
};

// Checks the options; throws DataError naming the bad option and the allowed range.
void validate(const SynthOptions& opt);

// The class prototypes: float [classes, 3, 32 + 2*max_shift, 32 + 2*max_shift], values in 0..255.
at::Tensor synthetic_prototypes(const SynthOptions& opt);

// One split (train: opt.train images; test: opt.test images, drawn independently of train).
Dataset generate_synthetic(const SynthOptions& opt, bool train);

// Writes out_dir/cifar-100-binary/train.bin and test.bin (the official archive's layout), each
// atomically. Returns the directory it wrote to.
std::string write_synthetic(const std::string& out_dir, const SynthOptions& opt);

}  // namespace ddp::cifar
