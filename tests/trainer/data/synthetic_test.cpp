#include <ATen/Parallel.h>

#include <chrono>
#include <cstdlib>

#include "data/synthetic.hpp"
#include "test_support.hpp"

using namespace ddp::cifar;
using namespace ddp::cifar::test;
using ::testing::HasSubstr;

namespace {

SynthOptions small(int64_t train, int64_t test, int64_t classes, uint64_t seed = 7) {
  SynthOptions o;
  o.train = train;
  o.test = test;
  o.classes = classes;
  o.seed = seed;
  return o;
}

// Flip-invariant 8x8 features: 4x4 average pooling, then the mean of the image and its mirror.
torch::Tensor features(const torch::Tensor& images) {
  torch::Tensor x = torch::avg_pool2d(images.to(torch::kFloat32) / 255.0, 4);
  x = (x + x.flip({3})) / 2;
  return x.reshape({x.size(0), -1});
}

// Accuracy on test of the nearest class mean (class means from train).
double nearest_mean_accuracy(const Dataset& train, const Dataset& test, int64_t classes) {
  const torch::Tensor f = features(train.images);
  torch::Tensor means = torch::zeros({classes, f.size(1)});
  means.index_add_(0, train.labels, f);
  means /= torch::bincount(train.labels, {}, classes).to(torch::kFloat32).unsqueeze(1);
  const torch::Tensor pred = torch::cdist(features(test.images), means).argmin(1);
  return pred.eq(test.labels).to(torch::kFloat64).mean().item<double>();
}

}  // namespace

TEST(SyntheticData, ShapesLabelsAndBalance) {
  const Dataset d = generate_synthetic(small(1000, 10, 10), true);
  EXPECT_EQ(d.images.sizes(), (std::vector<int64_t>{1000, 3, 32, 32}));
  EXPECT_EQ(d.images.scalar_type(), torch::kUInt8);
  EXPECT_EQ(d.labels.scalar_type(), torch::kInt64);
  EXPECT_TRUE(torch::equal(torch::bincount(d.labels), torch::full({10}, 100, torch::kInt64)));
  // Shuffled, not sorted by class.
  EXPECT_FALSE(torch::equal(d.labels.slice(0, 0, 10), torch::arange(10)));
  // Pixels use most of the range.
  EXPECT_LT(d.images.min().item<int>(), 30);
  EXPECT_GT(d.images.max().item<int>(), 225);
}

TEST(SyntheticData, DeterministicForASeed) {
  const SynthOptions o = small(300, 100, 100, 42);
  const Dataset a = generate_synthetic(o, true);
  const Dataset b = generate_synthetic(o, true);
  EXPECT_TRUE(torch::equal(a.images, b.images));
  EXPECT_TRUE(torch::equal(a.labels, b.labels));
  // The same on one thread as on several.
  const int threads = at::get_num_threads();
  at::set_num_threads(1);
  const Dataset c = generate_synthetic(o, true);
  at::set_num_threads(threads);
  EXPECT_TRUE(torch::equal(a.images, c.images));
  // Another seed, or the test split, differs.
  EXPECT_FALSE(torch::equal(a.images, generate_synthetic(small(300, 100, 100, 43), true).images));
  const Dataset t = generate_synthetic(o, false);
  EXPECT_EQ(t.size(), 100);
  EXPECT_FALSE(torch::equal(a.images.slice(0, 0, 100), t.images));
  // A fixed pixel of a fixed seed: the output does not depend on the LibTorch version.
  const Dataset tiny = generate_synthetic(small(2, 1, 100, 1), true);
  std::cout << "seed 1 sample 0: label " << tiny.labels[0].item<int64_t>() << ", pixel(0,0,0) "
            << tiny.images[0][0][0][0].item<int>() << ", sum " << tiny.images.sum().item<int64_t>()
            << "\n";
}

TEST(SyntheticData, SamplesOfAClassVaryButResembleEachOther) {
  const Dataset d = generate_synthetic(small(400, 10, 2), true);
  const torch::Tensor x = d.images.to(torch::kFloat32);
  const torch::Tensor a = x.index({d.labels.eq(0)});
  const torch::Tensor b = x.index({d.labels.eq(1)});
  EXPECT_FALSE(torch::equal(a[0], a[1]));
  const double within = (a[0] - a[1]).abs().mean().item<double>();
  const double between = (a.mean(0) - b.mean(0)).abs().mean().item<double>();
  std::cout << "mean |a0-a1| " << within << ", |mean(a)-mean(b)| " << between << "\n";
  EXPECT_GT(within, 5.0);  // noise, shift, flip, brightness
}

TEST(SyntheticData, LearnableFarAboveChance) {
  for (int64_t classes : {10, 100}) {
    const SynthOptions o = small(50 * classes, 10 * classes, classes, 3);
    const double acc =
        nearest_mean_accuracy(generate_synthetic(o, true), generate_synthetic(o, false), classes);
    std::cout << classes << " classes: nearest class mean on 8x8 flip-invariant features: "
              << acc << " (chance " << 1.0 / classes << ")\n";
    EXPECT_GT(acc, classes == 10 ? 0.6 : 0.3) << classes;  // chance: 0.1, 0.01
    EXPECT_LT(acc, 0.95) << classes;  // but not trivial: blending, contrast and noise
  }
  // Noise makes it harder, not impossible.
  SynthOptions noisy = small(5000, 1000, 100, 3);
  noisy.noise = 0.3;
  const double acc = nearest_mean_accuracy(generate_synthetic(noisy, true),
                                           generate_synthetic(noisy, false), 100);
  std::cout << "100 classes, noise 0.3: " << acc << "\n";
  EXPECT_GT(acc, 0.1);
}

TEST(SyntheticData, RejectsBadOptions) {
  EXPECT_THAT(error_of([] { generate_synthetic(small(10, 10, 0), true); }), HasSubstr("--classes 0"));
  EXPECT_THAT(error_of([] { generate_synthetic(small(10, 10, 101), true); }), HasSubstr("1..100"));
  EXPECT_THAT(error_of([] { generate_synthetic(small(0, 10, 10), true); }), HasSubstr("--train 0"));
  SynthOptions o = small(10, 10, 10);
  o.noise = -1;
  EXPECT_THAT(error_of([&] { generate_synthetic(o, true); }), HasSubstr("--noise"));
  o.noise = 0.1;
  o.mix = 0.6;
  EXPECT_THAT(error_of([&] { generate_synthetic(o, true); }), HasSubstr("--mix 0.6"));
}

TEST(SyntheticData, WritesTheOfficialLayoutThatLoads) {
  TempDir dir;
  const SynthOptions o = small(120, 30, 7);
  EXPECT_EQ(write_synthetic(dir.str(), o), dir / "cifar-100-binary");
  EXPECT_EQ(entries(dir.path() / "cifar-100-binary"), (std::set<std::string>{"test.bin", "train.bin"}));
  const Dataset train = load_cifar100(dir.str(), true);
  const Dataset test = load_cifar100(dir.str(), false);
  EXPECT_TRUE(torch::equal(train.images, generate_synthetic(o, true).images));
  EXPECT_TRUE(torch::equal(train.labels, generate_synthetic(o, true).labels));
  EXPECT_EQ(test.size(), 30);
  EXPECT_LT(train.labels.max().item<int64_t>(), 7);
}

TEST(SyntheticData, CommandLineTool) {
  TempDir dir;
  const std::string synth = DDP_CIFAR_SYNTH;
  const std::string cmd = synth + " --out " + dir.str() +
                          "/out --train 200 --test 50 --classes 20 --seed 5 --noise 0.1 >/dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  SynthOptions o = small(200, 50, 20, 5);
  o.noise = 0.1;
  const Dataset train = load_cifar100(dir / "out", true);
  EXPECT_TRUE(torch::equal(train.images, generate_synthetic(o, true).images));
  EXPECT_EQ(load_cifar100(dir / "out", false).size(), 50);
  // Bad values are refused by the parser with a non-zero exit.
  EXPECT_NE(std::system((synth + " --out " + dir.str() + "/x --classes 101 2>/dev/null").c_str()), 0);
  EXPECT_NE(std::system((synth + " --train 10 2>/dev/null").c_str()), 0);  // --out is required
  EXPECT_FALSE(fs::exists(dir / "x"));
}

TEST(SyntheticData, GeneratesAFullSizeDataSetQuickly) {
  TempDir dir;
  SynthOptions o;  // 50000 + 10000 images, 100 classes
  const auto t0 = std::chrono::steady_clock::now();
  const Dataset train = generate_synthetic(o, true);
  const Dataset test = generate_synthetic(o, false);
  const double gen = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const auto t1 = std::chrono::steady_clock::now();
  write_synthetic(dir.str(), o);
  const double all = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
  std::cout << "generated 50000+10000 images in " << gen << " s; generated and wrote them in "
            << all << " s (" << at::get_num_threads() << " threads)\n";
  EXPECT_EQ(train.size() + test.size(), 60000);
  EXPECT_LT(gen, 10.0);
}
