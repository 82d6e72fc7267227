// The build without libcurl, libarchive or OpenSSL (CMakeLists.txt chooses this file): reading
// and synthetic data work, and each download entry point says how to get the data another way.
#include <string>

#include "data/cifar_format.hpp"
#include "data/download.hpp"

namespace ddp::cifar {

bool download_supported() { return false; }

namespace {
[[noreturn]] void unsupported(const std::string& what) {
  throw DataError(what + ": this build has no download support (libcurl, libarchive or OpenSSL was "
                         "not found when it was configured; Debian: libcurl4-openssl-dev "
                         "libarchive-dev libssl-dev). Fix: rebuild with them, or fetch "
                         "https://www.cs.toronto.edu/~kriz/cifar-100-binary.tar.gz by hand and "
                         "unpack it into the data directory, or generate synthetic data with `" +
                  std::string(kSynthCommand) + " DIR`");
}
}  // namespace

void download_cifar100(const std::string& data_dir, const DownloadSource& src,
                       const std::function<void(const std::string&)>&) {
  if (cifar100_present(data_dir)) return;
  unsupported("cannot download " + src.url + " into " + data_dir);
}
std::string md5_hex_of_file(const std::string& path) { unsupported("cannot hash " + path); }
void extract_archive(const std::string& archive, const std::string&, const std::string&) {
  unsupported("cannot unpack " + archive);
}

}  // namespace ddp::cifar
