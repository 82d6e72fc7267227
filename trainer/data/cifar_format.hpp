#pragma once
// The CIFAR-100 binary format (cifar-100-binary.tar.gz: train.bin, test.bin). Each record is
// 1 byte coarse label (0-19), 1 byte fine label (0-99), then 3072 bytes of pixels: the 1024 red,
// then 1024 green, then 1024 blue values of a 32x32 image, row-major. No header, no footer.
#include <cstdint>
#include <string>

// The tensor type alone: LibTorch's umbrella header is 20 s of every source that includes this one.
#include <ATen/core/Tensor.h>

#include "data/data_error.hpp"

namespace ddp::cifar {

inline constexpr int64_t kImageSide = 32;
inline constexpr int64_t kChannels = 3;
inline constexpr int64_t kPixelBytes = kChannels * kImageSide * kImageSide;  // 3072
inline constexpr int64_t kRecordBytes = 2 + kPixelBytes;                     // 3074
inline constexpr int64_t kFineClasses = 100;
inline constexpr int64_t kCoarseClasses = 20;

// The directory the official archive unpacks into, and the file names inside it.
inline constexpr const char* kArchiveDir = "cifar-100-binary";
inline constexpr const char* kTrainFile = "train.bin";
inline constexpr const char* kTestFile = "test.bin";
// The command that makes synthetic data in the same layout (named in error messages).
inline constexpr const char* kSynthCommand = "cifar-synth --out";

struct Dataset {
  at::Tensor images;  // uint8 [N,3,32,32], CPU, contiguous
  at::Tensor labels;  // int64 [N], fine labels 0..99
  int64_t size() const { return labels.defined() ? labels.size(0) : 0; }
};

// The coarse label written for a fine label. The official archive uses CIFAR's superclass table;
// the trainer only uses fine labels, so written files use this fixed mapping (0..19).
inline int64_t coarse_of_fine(int64_t fine) { return fine / 5; }

// Reads and validates one file (one read into the tensor's memory). Throws DataError when the
// file is missing, unreadable, empty, not a multiple of 3074 bytes, or has a label out of range.
Dataset read_cifar100_file(const std::string& path);

// Writes `data` in the binary format, atomically (a temp file in the same directory, then rename);
// creates the parent directory. Throws DataError on a malformed Dataset or an I/O error.
void write_cifar100_file(const std::string& path, const Dataset& data);

// The file load_cifar100 would read: data_dir/cifar-100-binary/{train,test}.bin (the official
// archive's layout), else data_dir/{train,test}.bin; "" when neither exists.
std::string find_cifar100_file(const std::string& data_dir, bool train);

// Loads the train or test set from data_dir (see find_cifar100_file). When it is missing, the
// error says where it looked and to pass --download or to run cifar-synth.
Dataset load_cifar100(const std::string& data_dir, bool train);

}  // namespace ddp::cifar
