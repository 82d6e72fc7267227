#include <sys/stat.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "test_support.hpp"

using namespace ddp::cifar;
using namespace ddp::cifar::test;
using ::testing::HasSubstr;

namespace {

void expect_equal(const Dataset& a, const Dataset& b) {
  ASSERT_EQ(a.size(), b.size());
  EXPECT_TRUE(torch::equal(a.images, b.images));
  EXPECT_TRUE(torch::equal(a.labels, b.labels));
}

// n records of the given (coarse, fine) labels, pixel byte i of record r = (r + i) % 251.
std::vector<char> records(const std::vector<std::pair<int, int>>& labels) {
  std::vector<char> b;
  for (size_t r = 0; r < labels.size(); ++r) {
    b.push_back(static_cast<char>(labels[r].first));
    b.push_back(static_cast<char>(labels[r].second));
    for (int i = 0; i < 3072; ++i) b.push_back(static_cast<char>((r + i) % 251));
  }
  return b;
}

}  // namespace

TEST(CifarFormat, RoundTrip) {
  TempDir dir;
  const Dataset d = random_dataset(37);
  write_cifar100_file(dir / "train.bin", d);
  EXPECT_EQ(fs::file_size(dir / "train.bin"), 37u * 3074u);
  const Dataset back = read_cifar100_file(dir / "train.bin");
  EXPECT_EQ(back.images.scalar_type(), torch::kUInt8);
  EXPECT_EQ(back.labels.scalar_type(), torch::kInt64);
  EXPECT_EQ(back.images.sizes(), (std::vector<int64_t>{37, 3, 32, 32}));
  EXPECT_TRUE(back.images.is_contiguous());
  expect_equal(d, back);
  // The coarse byte is the fixed mapping fine / 5; the fine byte follows.
  const auto bytes = read_bytes(dir / "train.bin");
  for (int64_t r = 0; r < 37; ++r) {
    const int64_t fine = d.labels[r].item<int64_t>();
    EXPECT_EQ(bytes[static_cast<size_t>(r * 3074)], coarse_of_fine(fine));
    EXPECT_EQ(bytes[static_cast<size_t>(r * 3074 + 1)], fine);
  }
  // No temporary file is left next to it.
  EXPECT_EQ(entries(dir.path()), (std::set<std::string>{"train.bin"}));
}

TEST(CifarFormat, ReadsTheRecordLayout) {
  TempDir dir;
  write_bytes(dir / "x.bin", records({{3, 17}, {19, 99}}));
  const Dataset d = read_cifar100_file(dir / "x.bin");
  ASSERT_EQ(d.size(), 2);
  EXPECT_EQ(d.labels[0].item<int64_t>(), 17);
  EXPECT_EQ(d.labels[1].item<int64_t>(), 99);
  // Planes R, G, B of 1024 bytes each, row-major 32x32.
  for (int r = 0; r < 2; ++r) {
    for (int c : {0, 1, 2}) {
      for (auto [y, x] : {std::pair{0, 0}, {0, 31}, {5, 7}, {31, 0}, {31, 31}}) {
        const int i = c * 1024 + y * 32 + x;
        EXPECT_EQ(d.images[r][c][y][x].item<int>(), (r + i) % 251) << r << " " << c << " " << y << " " << x;
      }
    }
  }
}

TEST(CifarFormat, MissingFile) {
  TempDir dir;
  const std::string msg = error_of([&] { read_cifar100_file(dir / "nope.bin"); });
  EXPECT_THAT(msg, HasSubstr(dir / "nope.bin"));
  EXPECT_THAT(msg, HasSubstr("does not exist"));
  EXPECT_THAT(msg, HasSubstr("--download"));
  EXPECT_THAT(msg, HasSubstr("cifar-synth --out"));
}

TEST(CifarFormat, EmptyFile) {
  TempDir dir;
  write_bytes(dir / "e.bin", {});
  const std::string msg = error_of([&] { read_cifar100_file(dir / "e.bin"); });
  EXPECT_THAT(msg, HasSubstr(dir / "e.bin"));
  EXPECT_THAT(msg, HasSubstr("empty"));
  EXPECT_THAT(msg, HasSubstr("--download"));
}

TEST(CifarFormat, TruncatedFile) {
  TempDir dir;
  auto b = records({{0, 0}, {1, 5}, {2, 10}});
  b.resize(b.size() - 100);
  write_bytes(dir / "t.bin", b);
  const std::string msg = error_of([&] { read_cifar100_file(dir / "t.bin"); });
  EXPECT_THAT(msg, HasSubstr(dir / "t.bin"));
  EXPECT_THAT(msg, HasSubstr("9122 bytes"));
  EXPECT_THAT(msg, HasSubstr("not a multiple of the 3074-byte record"));
  EXPECT_THAT(msg, HasSubstr("2 whole records and 2974 extra bytes"));
  EXPECT_THAT(msg, HasSubstr("100 bytes short"));
  EXPECT_THAT(msg, HasSubstr("truncated"));
}

TEST(CifarFormat, WrongSizeCifar10File) {
  TempDir dir;
  write_bytes(dir / "c10.bin", std::vector<char>(3073 * 2, 1));  // two CIFAR-10 records
  const std::string msg = error_of([&] { read_cifar100_file(dir / "c10.bin"); });
  EXPECT_THAT(msg, HasSubstr("6146 bytes"));
  EXPECT_THAT(msg, HasSubstr("3072 extra bytes"));
  EXPECT_THAT(msg, HasSubstr("CIFAR-10"));
}

TEST(CifarFormat, FineLabelOutOfRange) {
  TempDir dir;
  write_bytes(dir / "f.bin", records({{0, 1}, {1, 150}, {2, 200}}));
  const std::string msg = error_of([&] { read_cifar100_file(dir / "f.bin"); });
  EXPECT_THAT(msg, HasSubstr(dir / "f.bin"));
  EXPECT_THAT(msg, HasSubstr("record 1 (byte offset 3074) has fine label 150, outside 0-99"));
  EXPECT_THAT(msg, HasSubstr("2 of 3 records"));
}

TEST(CifarFormat, CoarseLabelOutOfRange) {
  TempDir dir;
  write_bytes(dir / "c.bin", records({{0, 1}, {19, 2}, {20, 3}}));
  const std::string msg = error_of([&] { read_cifar100_file(dir / "c.bin"); });
  EXPECT_THAT(msg, HasSubstr("record 2 (byte offset 6148) has coarse label 20, outside 0-19"));
}

TEST(CifarFormat, DirectoryIsNotAFile) {
  TempDir dir;
  fs::create_directory(dir / "d.bin");
  EXPECT_THAT(error_of([&] { read_cifar100_file(dir / "d.bin"); }), HasSubstr("not a regular file"));
}

TEST(CifarFormat, WriteRejectsBadDatasetsAndKeepsTheOldFile) {
  TempDir dir;
  const Dataset good = random_dataset(4);
  write_cifar100_file(dir / "a.bin", good);
  Dataset bad = random_dataset(4, 2);
  bad.labels[2] = 100;
  EXPECT_THAT(error_of([&] { write_cifar100_file(dir / "a.bin", bad); }), HasSubstr("0-99"));
  Dataset wrong_shape{torch::zeros({4, 3, 28, 28}, torch::kUInt8), torch::zeros({4}, torch::kInt64)};
  EXPECT_THAT(error_of([&] { write_cifar100_file(dir / "a.bin", wrong_shape); }),
              HasSubstr("uint8 [N,3,32,32]"));
  Dataset wrong_count{torch::zeros({4, 3, 32, 32}, torch::kUInt8), torch::zeros({3}, torch::kInt64)};
  EXPECT_THAT(error_of([&] { write_cifar100_file(dir / "a.bin", wrong_count); }), HasSubstr("labels"));
  expect_equal(good, read_cifar100_file(dir / "a.bin"));
  // Overwriting replaces the file; parents are created.
  const Dataset other = random_dataset(2, 3);
  write_cifar100_file(dir / "a.bin", other);
  expect_equal(other, read_cifar100_file(dir / "a.bin"));
  write_cifar100_file(dir / "new/sub/b.bin", other);
  expect_equal(other, read_cifar100_file(dir / "new/sub/b.bin"));
  EXPECT_EQ(entries(dir.path()), (std::set<std::string>{"a.bin", "new"}));
}

TEST(CifarFormat, LoadsTheOfficialLayout) {
  TempDir dir;
  const Dataset train = random_dataset(5, 1), test = random_dataset(3, 2);
  write_cifar100_file(dir / "cifar-100-binary/train.bin", train);
  write_cifar100_file(dir / "cifar-100-binary/test.bin", test);
  expect_equal(train, load_cifar100(dir.str(), true));
  expect_equal(test, load_cifar100(dir.str(), false));
}

TEST(CifarFormat, LoadsTheFlatLayout) {
  TempDir dir;
  const Dataset train = random_dataset(5, 1), test = random_dataset(3, 2);
  write_cifar100_file(dir / "train.bin", train);
  write_cifar100_file(dir / "test.bin", test);
  expect_equal(train, load_cifar100(dir.str(), true));
  expect_equal(test, load_cifar100(dir.str(), false));
  // The official layout wins when both exist.
  const Dataset official = random_dataset(2, 9);
  write_cifar100_file(dir / "cifar-100-binary/train.bin", official);
  expect_equal(official, load_cifar100(dir.str(), true));
  EXPECT_EQ(find_cifar100_file(dir.str(), true), dir / "cifar-100-binary/train.bin");
}

TEST(CifarFormat, LoadMissingSaysWhereItLookedAndWhatToDo) {
  TempDir dir;
  const std::string msg = error_of([&] { load_cifar100(dir.str(), false); });
  EXPECT_THAT(msg, HasSubstr("test set not found"));
  EXPECT_THAT(msg, HasSubstr(dir / "cifar-100-binary/test.bin"));
  EXPECT_THAT(msg, HasSubstr(dir / "test.bin"));
  EXPECT_THAT(msg, HasSubstr("--download"));
  EXPECT_THAT(msg, HasSubstr("cifar-synth --out " + dir.str()));
  // A file that exists but is broken is reported as such, not as missing.
  write_bytes(dir / "test.bin", std::vector<char>(10, 0));
  EXPECT_THAT(error_of([&] { load_cifar100(dir.str(), false); }), HasSubstr("10 extra bytes"));
}

// Measured against the least any loader does with the same file (one read of it and a copy of
// each record's pixels), side by side, so that a busy machine slows both: 1.26 s against 1.23 s
// on the 2-core development machine. An absolute bound (1 s before) failed there under CI's
// parallel builds. A loader that makes a tensor per record is many times the least.
namespace {

double least_load_seconds(const std::string& path) {
  const auto t0 = std::chrono::steady_clock::now();
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  std::vector<char> raw(static_cast<std::size_t>(in.tellg()));
  in.seekg(0);
  in.read(raw.data(), static_cast<std::streamsize>(raw.size()));
  const std::size_t records = raw.size() / 3074;
  std::vector<char> pixels(records * 3072);
  for (std::size_t r = 0; r < records; ++r) {
    std::memcpy(pixels.data() + r * 3072, raw.data() + r * 3074 + 2, 3072);
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  // Read one copied byte, so that the copy is work the compiler must keep.
  volatile char kept = pixels.empty() ? 0 : pixels.back();
  (void)kept;
  return s;
}

}  // namespace

TEST(CifarFormat, LoadsAFullSizeTrainSetQuickly) {
  TempDir dir;
  Dataset d = random_dataset(50000);
  write_cifar100_file(dir / "train.bin", d);
  Dataset back;
  double best = 1e9, least = 1e9;
  for (int i = 0; i < 3; ++i) {  // page cache warm after the write; best of three, alternating
    const auto t0 = std::chrono::steady_clock::now();
    back = read_cifar100_file(dir / "train.bin");
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    least = std::min(least, least_load_seconds(dir / "train.bin"));
  }
  std::cout << "read 50000 records (153.7 MB) in " << best * 1000 << " ms; one read and a copy of "
            << "the pixels: " << least * 1000 << " ms\n";
  expect_equal(d, back);
  EXPECT_LT(best, 3 * least) << "the loader takes more than 3 times the least a loader does";
}
