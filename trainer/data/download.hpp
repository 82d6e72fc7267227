#pragma once
// Fetches the official CIFAR-100 binary archive, checks its MD5 and unpacks it, so that
// load_cifar100(data_dir, ...) finds data_dir/cifar-100-binary/{train,test}.bin.
#include <functional>
#include <string>

#include "data/data_error.hpp"

namespace ddp::cifar {

struct DownloadSource {
  std::string url = "https://www.cs.toronto.edu/~kriz/cifar-100-binary.tar.gz";
  // MD5 of the official cifar-100-binary.tar.gz (168,513,733 bytes), as listed on
  // https://www.cs.toronto.edu/~kriz/cifar.html.
  std::string md5 = "03b5dce01913d631647c71ecec9e9cb8";
};

// True when data_dir already holds a train and a test file (either layout) whose sizes are a
// non-zero multiple of the 3074-byte record. Does not read the files.
bool cifar100_present(const std::string& data_dir);

// Does nothing when cifar100_present(data_dir). Otherwise downloads src.url (libcurl: redirects
// followed, HTTP errors fail, connect timeout, stall timeout) into a temporary file in data_dir
// while computing its MD5, compares it with src.md5 (case-insensitive), unpacks the archive into a
// staging directory in data_dir (only regular files and directories; absolute paths and '..'
// refused), then moves its top-level entries into data_dir and removes the archive. On any error
// nothing is left behind in data_dir, and the DataError names the URL and the cause.
// Not safe to run concurrently on the same data_dir (call it from one rank, then barrier).
// Progress goes to stderr (download_progress.hpp); `tell` hears each progress line and what comes
// after the download ("unpacking ..."), for the ranks that wait.
void download_cifar100(const std::string& data_dir, const DownloadSource& src = {},
                       const std::function<void(const std::string&)>& tell = {});

// Building blocks, public for tests and tools.
// The lowercase hex MD5 of a file's contents.
std::string md5_hex_of_file(const std::string& path);
// Unpacks a (compressed) tar archive into dest_dir, which must exist, with the rules above; on an
// error the partial output is left for the caller to remove. `origin` names the source in errors.
void extract_archive(const std::string& archive, const std::string& dest_dir,
                     const std::string& origin);

// Whether this build has download support (libcurl, libarchive, OpenSSL found at configure time).
bool download_supported();

}  // namespace ddp::cifar
