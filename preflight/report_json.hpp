// `ddp-preflight --json`: rank 0's whole result as one JSON document instead of the table, for
// scripts that resubmit without a slow node: the verdict, every check, every measurement (the
// all-ranks sweep size by size too), the standings against the median, the thresholds, every
// failure and every node to exclude. ddp-preflight(1) has the schema.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis.hpp"
#include "checks.hpp"
#include "ddp/allreduce_sweep.hpp"

namespace ddp::preflight {

inline constexpr const char* kPreflightFormat = "ddp-preflight/1";

struct PreflightResult {
  bool passed = false;
  std::string stopped_at;  // "checks": a check failed, nothing was measured; else "measurements"
  std::string reason;      // the failure in one paragraph (failure_message), empty when passed
  int ranks = 0;
  std::vector<std::string> nodes;  // by NODE_RANK
  std::string backend;             // empty when the checks stopped it before any backend
  std::string rendezvous;          // MASTER_ADDR:MASTER_PORT
  double seconds = 0;
  std::vector<Check> checks;
  std::optional<Measurement> all;
  std::optional<AllreduceSweep> sweep;  // all ranks, size by size
  std::vector<Measurement> links;
  Analysis analysis;
  Thresholds thresholds;
};

nlohmann::ordered_json result_json(const PreflightResult& result);

}  // namespace ddp::preflight
