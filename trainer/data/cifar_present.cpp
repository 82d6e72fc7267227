// Whether a data directory already holds CIFAR-100, by file names and sizes: the download skips
// its work then, with or without download support in the build.
#include <cstdint>
#include <filesystem>

#include "data/cifar_format.hpp"
#include "data/download.hpp"

namespace fs = std::filesystem;

namespace ddp::cifar {
namespace {

bool plausible_file(const fs::path& p) {
  std::error_code ec;
  if (!fs::is_regular_file(p, ec)) return false;
  const auto size = fs::file_size(p, ec);
  return !ec && size > 0 && size % static_cast<uintmax_t>(kRecordBytes) == 0;
}

}  // namespace

bool cifar100_present(const std::string& data_dir) {
  const std::string train = find_cifar100_file(data_dir, true);
  const std::string test = find_cifar100_file(data_dir, false);
  return !train.empty() && !test.empty() && plausible_file(train) && plausible_file(test);
}

}  // namespace ddp::cifar
