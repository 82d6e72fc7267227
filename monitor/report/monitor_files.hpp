// Which files ddp-report reads: the per-node files ddp-monitor writes, named
// ddp-monitor-JOB.STEP-NODE.jsonl (sampler_args.hpp), given one by one or by their directory.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ddp::monitor {

// The files named, with each directory replaced by its ddp-monitor-*.jsonl files (sorted). Throws
// ddp::plan::PlanError for a path that does not exist or a directory without such files.
std::vector<std::string> monitor_files(const std::vector<std::string>& paths);

// The files of one job (and step) in `dir`, sorted; none when the directory cannot be read.
std::vector<std::string> job_files_in(const std::string& dir, std::uint32_t job,
                                      std::optional<std::uint32_t> step);

}  // namespace ddp::monitor
