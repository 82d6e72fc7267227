#include <sched.h>

#include <algorithm>

#include "parse.hpp"
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

std::string format_cpu_list(const CpuList& cpus) { return format_index_list(cpus); }

}  // namespace ddp::plan
