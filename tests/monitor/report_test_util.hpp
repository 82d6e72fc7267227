// ddp-report's tests: a scratch directory, and per-node files made of records as ddp-monitor
// writes them (format_record), so the tests follow the format wherever it goes.
#pragma once

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "../common/plan_error.hpp"
#include "monitor_files.hpp"
#include "record.hpp"

namespace ddp::monitor::test {

class Dir {
 public:
  Dir() {
    static std::atomic<int> made{0};
    path_ = std::filesystem::temp_directory_path() /
            ("ddp-report-" + std::to_string(getpid()) + "-" + std::to_string(made++));
    std::filesystem::create_directories(path_);
  }
  ~Dir() { std::filesystem::remove_all(path_); }
  Dir(const Dir&) = delete;
  Dir& operator=(const Dir&) = delete;
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(path_ / name, std::ios::binary) << text;
    return (path_ / name).string();
  }
  std::string path() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

inline std::string lines(const std::vector<Record>& records) {
  std::string out;
  for (const Record& r : records) out += format_record(r) + "\n";
  return out;
}

// A node of `gpus` GPUs (one rank each), sampled every second for `samples` seconds at
// utilisation `util` (GPU `idle_gpu` at 0), its eth0 moving 1 MB/s each way.
inline std::string node_file(unsigned job, unsigned index, unsigned nodes, const std::string& node,
                             double unix, double util, unsigned gpus = 1, unsigned samples = 2,
                             int idle_gpu = -1, bool end = true) {
  std::vector<Record> r = {{0, StartRecord{job, 0, node, index, nodes, 1, unix, 100}}};
  for (unsigned g = 0; g < gpus; ++g) r.push_back({0, GpuInfo{g, "", "GPU X", 102400}});
  for (unsigned g = 0; g < gpus; ++g) r.push_back({0, TaskInfo{index * gpus + g, g, 200 + g}});
  for (unsigned s = 1; s <= samples; ++s) {
    const double t = s;
    for (unsigned g = 0; g < gpus; ++g) {
      const double u = static_cast<int>(g) == idle_gpu ? 0 : util;
      r.push_back({t, GpuSample{g, u, 1024.0 * (10 + g), 100 + u}});
    }
    for (unsigned g = 0; g < gpus; ++g) r.push_back({t, CpuSample{index * gpus + g, 50}});
    r.push_back({t, NetSample{"eth0", false, s * 1000000ull, s * 1000000ull}});
  }
  if (end) r.push_back({static_cast<double>(samples), EndRecord{"step-ended"}});
  return lines(r);
}

inline std::vector<std::string> paths_of(const std::vector<MonitorFile>& files) {
  std::vector<std::string> out;
  for (const MonitorFile& f : files) out.push_back(f.path);
  return out;
}

using ddp::test::error_of;

}  // namespace ddp::monitor::test
