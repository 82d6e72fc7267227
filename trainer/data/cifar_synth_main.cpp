// cifar-synth: writes synthetic CIFAR-100 binary data with learnable class structure into
// OUT/cifar-100-binary/{train,test}.bin, the official archive's layout, so `ddp-cifar100
// --data-dir OUT` reads it like the real data set.
#include <chrono>
#include <iostream>

#include <CLI/CLI.hpp>

#include "data/synthetic.hpp"
#include "version.hpp"

int main(int argc, char** argv) {
  ddp::cifar::SynthOptions opt;
  std::string out;
  CLI::App app{"Writes synthetic CIFAR-100 binary data (learnable classes) into "
               "OUT/cifar-100-binary/{train,test}.bin"};
  app.add_option("--out", out, "output directory (created if missing)")->required();
  app.add_option("--train", opt.train, "number of training images")
      ->capture_default_str()->check(CLI::Range(int64_t{1}, int64_t{10'000'000}));
  app.add_option("--test", opt.test, "number of test images")
      ->capture_default_str()->check(CLI::Range(int64_t{1}, int64_t{10'000'000}));
  app.add_option("--classes", opt.classes, "number of classes (labels 0..C-1)")
      ->capture_default_str()->check(CLI::Range(int64_t{1}, int64_t{100}));
  app.add_option("--seed", opt.seed, "random seed (same seed, same files)")->capture_default_str();
  app.add_option("--noise", opt.noise,
                 "standard deviation of the per-pixel noise, as a share of the 0-255 range")
      ->capture_default_str()->check(CLI::Range(0.0, 1.0));
  app.add_option("--mix", opt.mix,
                 "largest weight of a random other class blended into each sample (difficulty)")
      ->capture_default_str()->check(CLI::Range(0.0, 0.5));
  app.add_option("--max-shift", opt.max_shift, "largest random shift of a sample, in pixels")
      ->capture_default_str()->check(CLI::Range(int64_t{0}, int64_t{16}));
  app.set_version_flag("--version", std::string("cifar-synth ") + ddp::plan::kVersion);
  CLI11_PARSE(app, argc, argv);

  try {
    const auto t0 = std::chrono::steady_clock::now();
    const std::string dir = ddp::cifar::write_synthetic(out, opt);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::cout << "cifar-synth: wrote " << opt.train << " training and " << opt.test
              << " test images of " << opt.classes << " classes (seed " << opt.seed << ") to "
              << dir << " in " << s << " s\n";
  } catch (const std::exception& e) {
    std::cerr << "cifar-synth: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
