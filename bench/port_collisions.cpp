// How often concurrent DDP heads on one node get the same derived MASTER_PORT, with the plugin's
// own derive_port(): H heads (default 30) on one node, drawn many times, in three mixes of job ids
// as a shared node sees them: jobs submitted at different times (ids anywhere in the last 100,000),
// a burst of one user's jobs (consecutive ids), and steps of one job. Prints one JSON object: the
// fraction of draws with at least one shared port, beside the birthday bound for the range.
// Slurm's reserved ports (MpiParams=ports=, SLURM_STEP_RESV_PORTS) are handed out per node by
// slurmctld and never shared: the plugin takes those first (choose_port).
//
//   ddp-port-collisions [--heads H] [--draws D] [--low P --high Q]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "port.hpp"

namespace {

struct Options {
  unsigned heads = 30;
  unsigned draws = 20000;
  ddp::plan::PortRange range;  // the plugin's default, 20000-29999
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    const unsigned v = static_cast<unsigned>(std::strtoul(argv[i + 1], nullptr, 10));
    if (a == "--heads") o.heads = v;
    else if (a == "--draws") o.draws = v;
    else if (a == "--low") o.range.low = static_cast<std::uint16_t>(v);
    else if (a == "--high") o.range.high = static_cast<std::uint16_t>(v);
  }
  return o;
}

// Whether any two of the heads share a port; `job` and `step` give the i-th head's ids.
template <class Ids>
bool collides(const Options& o, Ids ids) {
  std::set<std::uint16_t> seen;
  for (unsigned i = 0; i < o.heads; ++i) {
    const auto [job, step] = ids(i);
    if (!seen.insert(ddp::plan::derive_port(job, step, o.range)).second) return true;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  std::mt19937_64 random(20261201);
  unsigned scattered = 0, burst = 0, steps = 0;
  for (unsigned d = 0; d < o.draws; ++d) {
    const auto base = static_cast<std::uint32_t>(1000000 + random() % 50000000);
    std::set<std::uint32_t> jobs;
    while (jobs.size() < o.heads) jobs.insert(base + static_cast<std::uint32_t>(random() % 100000));
    std::vector<std::uint32_t> list(jobs.begin(), jobs.end());
    scattered += collides(o, [&](unsigned i) { return std::pair<std::uint32_t, std::uint32_t>{list[i], 0}; });
    burst += collides(o, [&](unsigned i) { return std::pair<std::uint32_t, std::uint32_t>{base + i, 0}; });
    steps += collides(o, [&](unsigned i) { return std::pair<std::uint32_t, std::uint32_t>{base, i}; });
  }
  double none = 1;
  for (unsigned i = 0; i < o.heads; ++i) none *= 1.0 - static_cast<double>(i) / o.range.size();
  std::printf("{\"heads\": %u, \"draws\": %u, \"ports\": %u, \"birthday_bound\": %.4f, "
              "\"jobs_scattered\": %.4f, \"jobs_consecutive\": %.4f, \"steps_of_one_job\": %.4f}\n",
              o.heads, o.draws, o.range.size(), 1 - none, static_cast<double>(scattered) / o.draws,
              static_cast<double>(burst) / o.draws, static_cast<double>(steps) / o.draws);
  return 0;
}
