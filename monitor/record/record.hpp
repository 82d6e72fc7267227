// The per-node file ddp-monitor writes and ddp-report reads: JSON Lines, one object per line,
//
//   {"kind":"gpu","time":12.001,"gpu":0,"util":95,"mem_used_mib":61234,"power_w":612.5}
//
// `time` is seconds since the `start` record (monotonic clock, millisecond resolution). Kinds and
// their keys (a reading the hardware does not give is left out):
//
//   start    format job step node node_index nodes interval unix pid    the first line
//   gpu-info gpu [bus] [name] [mem_total_mib]         once per GPU
//   task     rank local pid                           once per task of the step on the node
//   gpu      gpu [util] [mem_used_mib] [power_w]      per GPU per sample: %, MiB, W
//   cpu      rank cpu                                 per task per sample: % of one CPU, the task
//                                                     and its children
//   net      nic rx_bytes tx_bytes                    per interface per sample, since time 0
//   ib       nic rx_bytes tx_bytes                    per InfiniBand port (HCA:PORT), the same
//   note     text                                     e.g. that NVML could not be loaded
//   end      reason                                   the last line of a complete file
//
// Readers skip kinds and keys they do not know, so the format can grow without breaking older
// readers; `format` changes only when a reader of this one would misread the file.
// ddp-report(1) documents the schema for users.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace ddp::monitor {

inline constexpr unsigned kFormat = 2;  // 1 was the `KIND TIME key=value` text of earlier releases

struct StartRecord {
  std::uint32_t job = 0;
  std::uint32_t step = 0;
  std::string node;
  unsigned node_index = 0;
  unsigned nodes = 1;
  double interval = 0;   // seconds
  double unix_time = 0;  // seconds since 1970 at time 0
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
  std::uint64_t rx_bytes = 0;  // since time 0
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

// One line of JSON, without the newline. Numbers are rounded as the schema says (time to the
// millisecond, utilisation and memory to whole units, power and CPU to a tenth).
std::string format_record(const Record& record);

// nullopt for an empty line or a kind this reader does not know. Throws ddp::plan::PlanError
// naming what is wrong (the caller adds file:line).
std::optional<Record> parse_record(std::string_view line);

}  // namespace ddp::monitor
