// ddp-preflight: run by every rank of a step before the user's program (srun --ddp-preflight, or
// by hand: srun --ddp ddp-preflight). Each rank checks its own node (interfaces, HCA ports, its
// GPU); the ranks meet at MASTER_ADDR:MASTER_PORT, where rank 0 compares their contracts; rank 0
// gathers the checks and, when every rank is fit, they measure all-reduce bandwidth and latency
// over all ranks and then between every pair of nodes. Rank 0 prints one table and the verdict;
// every rank exits 0 (passed), 1 (failed: the step should not run) or 2 (this rank cannot take
// part: bad arguments or contract).
#include <chrono>
#include <cstdio>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "analysis.hpp"
#include "checks.hpp"
#include "cuda_driver.hpp"
#include "ddp/allreduce_bench.hpp"
#include "ddp/context.hpp"
#include "ddp/env_contract.hpp"
#include "ddp/error.hpp"
#include "ddp/process_group.hpp"
#include "ddp/rendezvous.hpp"
#include "net_facts.hpp"
#include "rank_report.hpp"
#include "report.hpp"
#include "schedule.hpp"

namespace {

namespace pf = ddp::preflight;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

struct Args {
  pf::Thresholds thresholds;
  double budget = 2.0;       // seconds for the all-ranks sweep
  double pair_budget = 1.0;  // seconds for each round of node pairs
  unsigned max_mib = 64;
  std::string pairs = "auto";
  double timeout = 60;  // seconds for any one wait on the other ranks
  bool sweep = false;
};

milliseconds ms(double seconds) { return milliseconds(static_cast<long long>(seconds * 1000)); }

double since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The preflight keeps its own time-outs: a job's DDP_TIMEOUT=1800 is meant for its training.
ddp::EnvLookup without_timeouts() {
  const auto env = ddp::process_environment();
  return [env](const std::string& name) -> std::optional<std::string> {
    namespace c = ddp::contract;
    if (name == c::kDdpTimeout || name == c::kDdpRendezvousTimeout || name == c::kDdpPeerTimeout)
      return std::nullopt;
    return env(name);
  };
}

pf::RankReport check_this_rank(const ddp::Context& ctx, const std::string& host) {
  const auto env = ddp::process_environment();
  pf::RankReport r;
  r.rank = ctx.rank;
  r.node_rank = ctx.node_rank;
  r.host = host;
  r.checks.push_back(pf::check_interfaces(env, ddp::plan::read_net_facts()));
  r.checks.push_back(pf::check_hcas(env, "/sys/class/infiniband"));
  r.checks.push_back(pf::check_gpus(env, ctx, pf::query_cuda_devices(), r.gpu_bus_id));
  return r;
}

std::string node_list(const std::vector<pf::NodeLeader>& nodes) {
  std::string out;
  for (std::size_t i = 0; i < nodes.size() && i < 8; ++i) out += (i ? ", " : "") + nodes[i].host;
  if (nodes.size() > 8) out += ", ...";
  return out;
}

// "link\tA\tB\tranks\tlatency_us\tbusbw\tpeak_bytes\tcut" lines: the links this rank measured.
std::string encode_links(const std::vector<pf::Measurement>& links) {
  std::ostringstream out;
  for (const auto& m : links)
    out << "link\t" << m.nodes[0] << "\t" << m.nodes[1] << "\t" << m.ranks << "\t" << m.latency_us
        << "\t" << m.busbw_gbps << "\t" << m.peak_bytes << "\t" << (m.cut_short ? 1 : 0) << "\n";
  return out.str();
}

std::vector<pf::Measurement> decode_links(const std::string& text) {
  std::vector<pf::Measurement> out;
  std::istringstream in(text);
  std::string tag;
  pf::Measurement m;
  m.nodes.resize(2);
  int cut = 0;
  while (in >> tag >> m.nodes[0] >> m.nodes[1] >> m.ranks >> m.latency_us >> m.busbw_gbps >>
         m.peak_bytes >> cut) {
    m.name = m.nodes[0] + " <-> " + m.nodes[1];
    m.cut_short = cut != 0;
    out.push_back(m);
  }
  return out;
}

int run(const Args& args) {
  const auto start = Clock::now();
  const auto wait = ms(args.timeout / 2);
  std::optional<ddp::Context> context;
  try {
    context = ddp::Context::from_environment();
  } catch (const ddp::Error& e) {
    std::cerr << "ddp-preflight: this task cannot take part: " << e.what() << "\n";
    return 2;
  }
  const ddp::Context& ctx = *context;
  const std::string host = ctx.hostname_hint.value_or("?");
  const pf::RankReport mine = check_this_rank(ctx, host);

  std::shared_ptr<ddp::Rendezvous> rdv;
  try {
    rdv = ddp::Rendezvous::meet(ctx, wait);
  } catch (const ddp::Error& e) {
    std::cerr << "ddp-preflight: FAILED: rank " << ctx.rank << " on " << host << ": " << e.what()
              << "\n";
    return 1;
  }
  const double met = since(start);

  // Rank 0 hears every rank's checks; the verdict decides whether they go on to measure.
  std::vector<pf::RankReport> reports;
  for (const auto& text : rdv->all_gather(pf::encode_report(mine), wait))
    if (const auto r = pf::decode_report(text)) reports.push_back(*r);
  const auto nodes = pf::node_leaders(reports);
  std::vector<ddp::preflight::Check> rows;
  std::string verdict = "pass";
  if (ctx.is_main()) {
    rows.push_back({"contract", pf::Status::Ok,
                    std::to_string(ctx.world_size) + " ranks on " + std::to_string(nodes.size()) +
                        " node(s), the same WORLD_SIZE and MASTER on every rank"});
    rows.push_back({"rendezvous", pf::Status::Ok,
                    ctx.master_addr + ":" + std::to_string(ctx.master_port) + ", all ranks met in " +
                        std::to_string(met).substr(0, 4) + " s"});
    for (const auto& row : pf::summarise(reports)) rows.push_back(row);
    for (const auto& row : rows)
      if (row.status == pf::Status::Failed) verdict = "fail";
  }
  verdict = rdv->broadcast(verdict, wait);
  if (verdict != "pass") {
    if (ctx.is_main()) {
      std::cout << pf::render_checks(rows) << std::flush;
      std::cerr << "ddp-preflight: FAILED: a check failed on some rank (see the table); the step "
                   "was stopped before measuring\n";
    }
    rdv->finish(wait);
    return 1;
  }

  ddp::ProcessGroupOptions options;
  options.timeout = ms(args.timeout);
  options.peer_timeout = std::chrono::seconds(10);
  options.env = without_timeouts();
  auto group = ddp::ProcessGroup::create(rdv, options);

  ddp::AllreduceBenchOptions bench;
  bench.max_bytes = std::size_t{args.max_mib} << 20;
  bench.budget = ms(args.budget);
  const auto world = ddp::measure_allreduce(*group, bench);

  // Node pairs, one rank per node, disjoint pairs at once.
  bench.budget = ms(args.pair_budget);
  std::vector<pf::Measurement> measured;
  const auto rounds =
      pf::pair_rounds(static_cast<int>(nodes.size()), pf::pair_mode(args.pairs, static_cast<int>(nodes.size())));
  for (std::size_t r = 0; r < rounds.size(); ++r) {
    group->barrier();
    for (const auto& [a, b] : rounds[r]) {
      const int ra = nodes[a].rank, rb = nodes[b].rank;
      if (ctx.rank != ra && ctx.rank != rb) continue;
      auto pair = group->subgroup({ra, rb}, "preflight/" + std::to_string(r) + "/" +
                                                std::to_string(ra) + "-" + std::to_string(rb));
      const auto sweep = ddp::measure_allreduce(*pair, bench);
      pair->shutdown();
      if (ctx.rank == ra) measured.push_back(pf::measurement("", {nodes[a].host, nodes[b].host}, sweep));
    }
  }
  std::vector<pf::Measurement> links;
  for (const auto& text : rdv->all_gather(encode_links(measured), wait))
    for (const auto& m : decode_links(text)) links.push_back(m);

  verdict = "pass";
  if (ctx.is_main()) {
    std::optional<pf::Measurement> all = pf::measurement("all ranks", {}, world);
    const auto analysis = pf::analyse(all, links, args.thresholds);
    std::cout << "ddp-preflight: " << ctx.world_size << " ranks on " << nodes.size() << " node(s) ("
              << node_list(nodes) << "), " << group->backend_name() << ", rendezvous "
              << ctx.master_addr << ":" << ctx.master_port << "\n"
              << pf::render_checks(rows) << pf::render_measurements(all, links, analysis);
    if (args.sweep) std::cout << "all ranks, by size:\n" << pf::render_sweep(world);
    std::cout << pf::render_standings(analysis, links.size());
    if (analysis.passed()) {
      std::cout << "ddp-preflight: passed in " << std::to_string(since(start)).substr(0, 4) << " s\n";
    } else {
      verdict = "fail";
      std::cerr << "ddp-preflight: FAILED: " << pf::failure_message(analysis) << "\n";
    }
    std::cout << std::flush;
  }
  verdict = rdv->broadcast(verdict, wait);
  group->shutdown();
  rdv->finish(wait);
  return verdict == "pass" ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  CLI::App app{"ddp-preflight: check every rank of a DDP step and measure its all-reduce "
               "bandwidth before the training starts (run under srun --ddp, one task per rank)"};
  app.add_option("--min-busbw-gbps", args.thresholds.min_busbw_gbps,
                 "fail when a measured group's bus bandwidth (GB/s, as nccl-tests) is lower")
      ->check(CLI::PositiveNumber);
  app.add_option("--max-latency-us", args.thresholds.max_latency_us,
                 "fail when a measured group's smallest all-reduce takes longer (microseconds)")
      ->check(CLI::PositiveNumber);
  app.add_option("--min-fraction-of-median", args.thresholds.min_fraction_of_median,
                 "fail when the slowest node's best link is below this fraction of the median node's")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--thresholds-from", args.thresholds.origin,
                 "where the thresholds come from, for messages (e.g. 'profile vega')");
  app.add_option("--budget", args.budget, "seconds for the all-ranks sweep (default 2)")
      ->check(CLI::Range(0.05, 600.0));
  app.add_option("--pair-budget", args.pair_budget,
                 "seconds for each round of node pairs (default 1)")
      ->check(CLI::Range(0.05, 600.0));
  app.add_option("--max-mib", args.max_mib, "largest all-reduce in MiB (default 64, as nccl-tests -e 64M)")
      ->check(CLI::Range(1u, 4096u));
  app.add_option("--pairs", args.pairs,
                 "which node pairs to measure: auto (all up to 16 nodes, else ring), all, ring, none")
      ->check(CLI::IsMember({"auto", "all", "ring", "none"}));
  app.add_option("--timeout", args.timeout,
                 "seconds any one step may wait on the other ranks (default 60)")
      ->check(CLI::Range(1.0, 3600.0));
  app.add_flag("--sweep", args.sweep, "also print the all-ranks sweep size by size, as all_reduce_perf");
  CLI11_PARSE(app, argc, argv);
  try {
    return run(args);
  } catch (const ddp::Error& e) {
    std::cerr << "ddp-preflight: FAILED: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "ddp-preflight: FAILED: " << e.what() << "\n";
    return 1;
  }
}
