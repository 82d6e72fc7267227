// CPU time of the step's tasks from /proc: each task with the processes it started (a rank's
// data-loader workers count as the rank's). Only the user's own processes are read.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "proc_stat.hpp"

namespace ddp::monitor {

class ProcessTrees {
 public:
  // `exclude`: a process left out with its children (the sampler itself).
  ProcessTrees(std::string proc_root, long exclude);
  // The CPU ticks of each root's tree; roots that are gone are missing from the result.
  std::map<long, std::uint64_t> ticks(const std::vector<long>& roots) const;

 private:
  std::string proc_;
  long exclude_;
};

}  // namespace ddp::monitor
