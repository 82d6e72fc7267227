#include <sched.h>

#include <algorithm>
#include <cstdint>

#include "error.hpp"
#include "parse.hpp"
#include "topology.hpp"

namespace ddp::plan {
namespace {

// Above every kernel's NR_CPUS (8192 today); bounds what a typo like "0-4000000000" can allocate.
constexpr unsigned kMaxCpu = 65535;

}  // namespace

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

CpuList parse_cpu_list(const std::string& what, const std::string& text) {
  CpuList out;
  // "" is what format_cpu_list({}) writes, and what an empty cgroup cpuset file holds.
  if (text.empty()) return out;
  const std::string_view all(text);
  const auto fail = [&](const std::string& why) {
    return PlanError(what + "=" + quoted(text) + ": " + why +
                     "; write a CPU list like 0-3,8,10-11 (OS CPU numbers, ranges low-high)");
  };
  // A CPU named twice is a typo in a hand-written list (the kernel never writes one); found at
  // once, so "0-65535,0-65535,..." never builds more than kMaxCpu + 1 entries.
  std::vector<bool> seen(kMaxCpu + 1);
  std::size_t start = 0;
  while (start <= all.size()) {
    const std::size_t comma = std::min(all.find(',', start), all.size());
    const std::string_view item = all.substr(start, comma - start);
    if (item.empty()) throw fail("empty item");
    const std::size_t dash = item.find('-');
    const std::string_view first_text = item.substr(0, dash);
    const std::string_view last_text =
        dash == std::string_view::npos ? first_text : item.substr(dash + 1);
    if (first_text.empty() || last_text.empty()) throw fail("incomplete range " + quoted(item));
    const auto first = static_cast<unsigned>(parse_unsigned(what, first_text, 0, kMaxCpu));
    const auto last = static_cast<unsigned>(parse_unsigned(what, last_text, 0, kMaxCpu));
    if (last < first) throw fail("range " + quoted(item) + " runs backwards");
    for (unsigned cpu = first; cpu <= last; ++cpu) {
      if (seen[cpu]) throw fail("CPU " + std::to_string(cpu) + " is listed twice");
      seen[cpu] = true;
      out.push_back(cpu);
    }
    start = comma + 1;
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace ddp::plan
