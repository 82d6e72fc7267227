// One process's line of /proc/PID/stat, as far as the sampler and the plugin need it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ddp::monitor {

struct ProcStat {
  long pid = 0;
  long ppid = 0;
  char state = '?';
  // utime + stime + cutime + cstime: the process and its children already waited for, so
  // summing over a live tree counts every tick once.
  std::uint64_t ticks = 0;
  std::uint64_t start_time = 0;  // ticks after boot: with pid, names one process for good
};

// /proc/PID/stat's text; nullopt when it is not one (the command name may hold spaces and ')').
std::optional<ProcStat> parse_proc_stat(std::string_view text);
std::optional<ProcStat> read_proc_stat(const std::string& proc_root, long pid);

// The calling process's start time (field 22 of /proc/self/stat), 0 when unknown. Allocates
// nothing and calls only async-signal-safe functions: for a child forked from slurmstepd.
std::uint64_t own_start_time() noexcept;

}  // namespace ddp::monitor
