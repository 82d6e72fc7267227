// A fresh profile directory per test, so tests never see each other's files, and a helper that
// returns an error's message for the checks on what it says.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include "../common/plan_error.hpp"

namespace profile_test {

class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "ddp-profile-XXXXXX").string();
    if (!::mkdtemp(pattern.data())) std::abort();
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }

  // Writes DIR/FILE and returns its path.
  std::string write(const std::string& file, const std::string& text) const {
    const std::string p = path_ + "/" + file;
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }

 private:
  std::string path_;
};

using ddp::test::error_of;

}  // namespace profile_test
