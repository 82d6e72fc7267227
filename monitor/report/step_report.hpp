// ddp-report's reading: the per-node files of one or more steps, grouped by step, each file
// streamed once into its node's summary (summary.hpp) and the step's series over time
// (series.hpp). Before that, each file's first record and last lines are read to lay out the
// step's time axis, so no reading is kept in memory. Files are opened and read as
// monitor_files.hpp says: never through a link, in bounded lines, up to a bounded size.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "monitor_files.hpp"
#include "record.hpp"
#include "series.hpp"
#include "summary.hpp"

namespace ddp::monitor {

// What a file says before it is read through: its start record and its last record's time.
struct FileHead {
  MonitorFile file;
  StartRecord start;
  double last_time = 0;  // of the last record within bounds.file
};

// Throws ddp::plan::PlanError naming the file (and line) when it is not a ddp-monitor file.
FileHead read_head(const MonitorFile& file, const ReadBounds& bounds = {});
FileHead read_head(const std::string& path, const ReadBounds& bounds = {});

struct StepFiles {
  std::uint32_t job = 0, step = 0;
  std::vector<FileHead> nodes;  // by node index
};

// Grouped by job and step, in that order.
std::vector<StepFiles> group_by_step(std::vector<FileHead> heads);

struct NodeLog {
  std::string path;
  NodeSummary summary;
  std::vector<std::string> warnings;  // e.g. a last line cut short, lines too long skipped
};

// Streams the file into `log.summary` and `series`. Throws PlanError naming FILE:LINE.
NodeLog read_node_log(const MonitorFile& file, NodeSeriesBuilder* series = nullptr,
                      const ReadBounds& bounds = {});
NodeLog read_node_log(const std::string& path, NodeSeriesBuilder* series = nullptr,
                      const ReadBounds& bounds = {});

struct StepData {
  std::uint32_t job = 0, step = 0;
  unsigned expected_nodes = 0;  // the step's node count, as the samplers were told it
  std::vector<NodeLog> nodes;   // by node index
  StepSeries series;
};

StepData read_step(const StepFiles& files, const ReadBounds& bounds = {});

}  // namespace ddp::monitor
