// Rank 0's table: the checks, then one row per all-reduce measurement, then the slowest node and
// link against the median and the verdict.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analysis.hpp"
#include "checks.hpp"
#include "ddp/allreduce_sweep.hpp"

namespace ddp::preflight {

// "64 MiB", "512 B".
std::string size_text(std::size_t bytes);

// Columns padded to their widest cell, two spaces apart; the last column unpadded.
std::string table(const std::vector<std::vector<std::string>>& rows);

Measurement measurement(const std::string& name, std::vector<std::string> nodes,
                        const AllreduceSweep& sweep);

std::string render_checks(const std::vector<Check>& rows);
std::string render_measurements(const std::optional<Measurement>& all,
                                const std::vector<Measurement>& links, const Analysis& analysis);
// nccl-tests' per-size table of one sweep.
std::string render_sweep(const AllreduceSweep& sweep);
// The slowest node and link against the median, for the lines under the table.
std::string render_standings(const Analysis& analysis, std::size_t links);
// The failure in one paragraph: the first kMaxFailuresNamed thresholds not met (the others
// counted), and what to do.
inline constexpr std::size_t kMaxFailuresNamed = 8;
std::string failure_message(const Analysis& analysis);

}  // namespace ddp::preflight
