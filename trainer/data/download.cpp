// The download of CIFAR-100 as a whole: fetch into a temporary file, check the MD5, unpack into a
// staging directory, then move into place, leaving nothing behind on any error. Built only with
// libcurl, libarchive and OpenSSL (CMakeLists.txt); download_unavailable.cpp otherwise.
#include "data/download.hpp"

#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdint>
#include <filesystem>
#include <iostream>

#include "data/cifar_format.hpp"
#include "data/download_progress.hpp"
#include "data/errno_text.hpp"
#include "data/http_fetch.hpp"

namespace fs = std::filesystem;

namespace ddp::cifar {
namespace {

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Removes a path on scope exit unless released.
struct Cleanup {
  fs::path path;
  ~Cleanup() {
    if (!path.empty()) {
      std::error_code ec;
      fs::remove_all(path, ec);
    }
  }
};

}  // namespace

bool download_supported() { return true; }

void download_cifar100(const std::string& data_dir, const DownloadSource& src,
                       const std::function<void(const std::string&)>& tell) {
  if (cifar100_present(data_dir)) {
    std::cerr << "cifar: CIFAR-100 already present in " << data_dir << ", not downloading\n";
    return;
  }
  std::error_code ec;
  fs::create_directories(data_dir, ec);
  if (ec) {
    throw DataError("cannot create the data directory " + data_dir + " for the download: " +
                    ec.message() + ". Fix: choose a writable --data-dir");
  }
  std::string tmpl = (fs::path(data_dir) / ".cifar-100-binary.tar.gz.part-XXXXXX").string();
  const int fd = ::mkstemp(tmpl.data());
  if (fd < 0) {
    throw DataError("cannot create a temporary file in " + data_dir + " for the download: " +
                    errno_text(errno) + ". Fix: choose a writable --data-dir");
  }
  Cleanup archive_guard{tmpl};
  std::cerr << "cifar: downloading " << src.url << " into " << data_dir << "\n";
  uint64_t bytes = 0;
  std::string got;
  DownloadProgress progress(stderr, ::isatty(STDERR_FILENO) == 1, tell);
  try {
    got = fetch(src.url, fd, tmpl, bytes, [&](uint64_t done, uint64_t total, double seconds) {
      progress.update(done, total, seconds);
    });
    progress.finish();
  } catch (...) {
    progress.finish();
    ::close(fd);
    throw;
  }
  if (::close(fd) != 0) {
    throw DataError("cannot write " + tmpl + ": " + errno_text(errno) + ". Fix: free disk space");
  }
  if (lower(got) != lower(src.md5)) {
    throw DataError("MD5 mismatch for " + src.url + ": expected " + lower(src.md5) + ", got " +
                    got + " (" + std::to_string(bytes) +
                    " bytes); the downloaded file was removed. The download was corrupted or the "
                    "URL serves a different file. Fix: try again; if it persists, check the URL "
                    "and the expected MD5");
  }

  std::string stmpl = (fs::path(data_dir) / ".cifar-100-extract-XXXXXX").string();
  if (::mkdtemp(stmpl.data()) == nullptr) {
    throw DataError("cannot create a staging directory in " + data_dir + ": " + errno_text(errno));
  }
  Cleanup staging_guard{stmpl};
  std::cerr << "cifar: unpacking " << bytes << " bytes (MD5 ok) into " << data_dir << "\n";
  if (tell) tell("unpacking the archive");
  extract_archive(tmpl, stmpl, src.url);
  if (!cifar100_present(stmpl)) {
    throw DataError("the archive from " + src.url + " does not contain " + kArchiveDir + "/" +
                    kTrainFile + " and " + kTestFile +
                    " (is it the CIFAR-100 *binary* version?). Nothing was unpacked. Fix: use the "
                    "official cifar-100-binary.tar.gz");
  }
  for (const auto& entry : fs::directory_iterator(stmpl)) {
    const fs::path target = fs::path(data_dir) / entry.path().filename();
    fs::remove_all(target, ec);
    fs::rename(entry.path(), target, ec);
    if (ec) {
      throw DataError("cannot move " + entry.path().string() + " to " + target.string() + ": " +
                      ec.message());
    }
  }
  std::cerr << "cifar: unpacked " << src.url << " (" << bytes << " bytes, MD5 ok) into " << data_dir
            << "\n";
}

}  // namespace ddp::cifar
