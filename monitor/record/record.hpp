// The per-node file ddp-monitor writes and ddp-report reads: one record per line,
//
//   KIND TIME key=value ...
//
// TIME is seconds since the `start` record (monotonic clock, millisecond resolution); values hold
// no spaces (a GPU's name has its spaces written as '_'); a `note` is free text after TIME. Kinds:
//
//   start    job= step= node= node_index= nodes= interval= unix= pid=
//                                                     unix: wall clock at TIME 0; pid: the sampler's
//   gpu-info gpu= [bus=] [name=] [mem_total_mib=]    once per GPU
//   task     rank= local= pid=                        once per task of the step on the node
//   gpu      gpu= [util=] [mem_used_mib=] [power_w=]  per GPU per sample: %, MiB, W
//   cpu      rank= cpu=                               per task per sample: % of one CPU, the
//                                                     task and its children
//   net      nic= rx_bytes= tx_bytes=                 per interface per sample, since TIME 0
//   ib       nic= rx_bytes= tx_bytes=                 per InfiniBand port (HCA:PORT), the same
//   note     free text                                e.g. that NVML could not be loaded
//   end      reason=                                  the last line of a complete file
//
// Lines starting with '#' are comments; readers skip kinds and keys they do not know, so the
// format can grow without breaking older readers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace ddp::monitor {

inline constexpr const char* kFormatLine = "# ddp-monitor 1: KIND TIME key=value...; see ddp-report(1)";

struct StartRecord {
  std::uint32_t job = 0;
  std::uint32_t step = 0;
  std::string node;
  unsigned node_index = 0;
  unsigned nodes = 1;
  double interval = 0;   // seconds
  double unix_time = 0;  // seconds since 1970 at TIME 0
  long pid = 0;          // the sampler's process id
};
struct GpuInfo {
  unsigned gpu = 0;
  std::string busid;
  std::string name;
  std::optional<double> mem_total_mib;
};
struct TaskInfo {
  unsigned rank = 0;
  unsigned local = 0;
  long pid = 0;
};
struct GpuSample {
  unsigned gpu = 0;
  std::optional<double> util;  // percent
  std::optional<double> mem_used_mib;
  std::optional<double> power_w;
};
struct CpuSample {
  unsigned rank = 0;
  double cpu = 0;  // percent of one CPU
};
struct NetSample {
  std::string nic;
  bool ib = false;
  std::uint64_t rx_bytes = 0;  // since TIME 0
  std::uint64_t tx_bytes = 0;
};
struct Note {
  std::string text;
};
struct EndRecord {
  std::string reason;
};

using RecordBody =
    std::variant<StartRecord, GpuInfo, TaskInfo, GpuSample, CpuSample, NetSample, Note, EndRecord>;

struct Record {
  double time = 0;
  RecordBody body;
};

// One line, without the newline.
std::string format_record(const Record& record);

// nullopt for a comment, an empty line or a kind this reader does not know. Throws
// ddp::plan::PlanError naming what is wrong (the caller adds file:line).
std::optional<Record> parse_record(std::string_view line);

}  // namespace ddp::monitor
