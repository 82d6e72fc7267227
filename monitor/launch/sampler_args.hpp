// The sampler's command line: what the plugin, in local task 0 of a monitored step, tells
// ddp-monitor about the node it samples. One definition for the side that writes it
// (plugin/core/plan/monitor_plan.cpp) and the side that reads it (sample/sampler_main.cpp), with
// the names of the files it writes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ddp::monitor {

inline constexpr unsigned kMinInterval = 1;       // seconds
inline constexpr unsigned kMaxInterval = 3600;
inline constexpr unsigned kDefaultInterval = 10;

struct GpuTarget {
  unsigned index = 0;  // Slurm's index on the node (= NVML's: both count in PCI bus-id order)
  std::string busid;   // "0000:3b:00.0" when the topology knows it; NVML is then asked by it
};

struct TaskTarget {  // a process to sample by hand (ddp-monitor --task RANK:PID)
  unsigned rank = 0;
  long pid = 0;
};

struct SamplerArgs {
  unsigned interval = kDefaultInterval;
  std::string dir;  // a pattern (%u user, %j job id, %% a '%'); "" = the working directory
  std::uint32_t job = 0;
  std::uint32_t step = 0;
  std::string node;
  unsigned node_index = 0;
  unsigned nodes = 1;
  unsigned tasks = 1;  // the step's tasks on this node
  std::vector<GpuTarget> gpus;
  std::vector<std::string> nets;  // network interfaces (bytes from /proc/net/dev)
  std::vector<std::string> ibs;   // InfiniBand ports "HCA:PORT" (sysfs port counters)
  std::vector<TaskTarget> task_pids;
  int control_fd = -1;  // what slurmstepd says (monitor/launch/control.hpp); -1 when run by hand
  int reply_fd = -1;    // where to say done; -1: control_fd (a socket, as the tests give)
};

// Without the program name. parse_sampler_args(to_argv(a)) == a.
std::vector<std::string> to_argv(const SamplerArgs& args);
// Throws ddp::plan::PlanError naming the argument and what is allowed.
SamplerArgs parse_sampler_args(const std::vector<std::string>& argv);

// The directory a pattern names for a user and job. Throws PlanError for a relative path or a '%'
// other than %u, %j and %%.
std::string expand_dir(const std::string& pattern, const std::string& user, std::uint32_t job);

// What %u is for this process: its user's name (its uid when it has no name).
std::string current_user_name();
// This process's working directory ("." when it cannot be read).
std::string current_dir();

// ddp-monitor-JOB.STEP-NODE.jsonl: one per node and step; ddp-report finds them by this shape.
inline constexpr const char* kFilePrefix = "ddp-monitor-";
inline constexpr const char* kFileSuffix = ".jsonl";
std::string log_file_name(std::uint32_t job, std::uint32_t step, const std::string& node);

}  // namespace ddp::monitor
