// From the measurements to the verdict: which node or link is slowest against the median, which
// profile thresholds are not met, and which node a resubmitted job should leave out. Pure
// functions of the numbers, so every rule is tested without a cluster.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace ddp::preflight {

// The site's limits (profile `preflight:` keys, or ddp-preflight's flags); unset: not checked.
struct Thresholds {
  std::optional<double> min_busbw_gbps;          // every measured group's peak bus bandwidth
  std::optional<double> max_latency_us;          // every measured group's smallest all-reduce
  std::optional<double> min_fraction_of_median;  // the slowest node's, against the median node
  std::string origin;                            // where they came from, for messages
};

// One all-reduce measurement: all ranks, or one link between two nodes.
struct Measurement {
  std::string name;                // "all ranks", "n1 <-> n3"
  std::vector<std::string> nodes;  // the two nodes of a link; empty for all ranks
  int ranks = 0;
  double latency_us = 0;  // the smallest size's time
  double busbw_gbps = 0;  // the sweep's peak
  std::size_t peak_bytes = 0;
  bool cut_short = false;  // the time budget ended the sweep early
};

// Below this fraction of the median, a node or link is called slow in the report, threshold or
// not: a link at half the speed of its peers is worth a look.
inline constexpr double kSlowFraction = 0.5;

struct Standing {
  std::string name;
  double busbw_gbps = 0;
  double median_gbps = 0;
  double fraction = 1;  // busbw / median
  bool slow = false;    // fraction < kSlowFraction
};

struct Analysis {
  // With three nodes or more: a node is as fast as its best link, compared with the median node.
  std::optional<Standing> slowest_node;
  // Every node below kSlowFraction or the threshold min_fraction_of_median, slowest first.
  std::vector<Standing> slow_nodes;
  // With one link or more, compared with the median node when there is one, else with the
  // median link (a single link is its own median).
  std::optional<Standing> slowest_link;
  std::vector<std::string> failures;     // one per threshold not met, naming what and by how much
  std::vector<std::string> exclude;      // nodes to leave out, when the numbers point at them
  std::string advice;                    // how to resubmit, or why no node can be named
  bool passed() const { return failures.empty(); }
};

double median(std::vector<double> values);

// `all` is the all-ranks measurement (nullopt when not taken); `links` one per measured pair.
Analysis analyse(const std::optional<Measurement>& all, const std::vector<Measurement>& links,
                 const Thresholds& thresholds);

// A link's bus bandwidth against the median the slowest link was compared with; nullopt when no
// median was taken.
std::optional<double> fraction_of_median(const Measurement& link, const Analysis& analysis);

// "--exclude=n3" or "--exclude=n3,n5"; empty for no node.
std::string exclude_option(const std::vector<std::string>& nodes);

}  // namespace ddp::preflight
