#include <sched.h>

#include <algorithm>

#include "topology.hpp"

namespace ddp::plan {

CpuList process_affinity() {
  cpu_set_t set;
  CPU_ZERO(&set);
  CpuList cpus;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return cpus;
  for (unsigned c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpus;
}

std::string format_cpu_list(const CpuList& cpus) {
  CpuList sorted = cpus;
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  std::string out;
  for (std::size_t i = 0; i < sorted.size();) {
    std::size_t j = i;
    while (j + 1 < sorted.size() && sorted[j + 1] == sorted[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(sorted[i]);
    // Pairs become "3-4" too, as the kernel writes them in Cpus_allowed_list.
    if (j > i) out += '-' + std::to_string(sorted[j]);
    i = j + 1;
  }
  return out;
}

}  // namespace ddp::plan
