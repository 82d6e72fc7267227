// ddp-preflight: run by every rank of a step before the user's program (srun --ddp-preflight, or
// by hand: srun --ddp ddp-preflight). Each rank checks its own node (interfaces, HCA ports, its
// GPU); the ranks meet at MASTER_ADDR:MASTER_PORT, where rank 0 compares their contracts; rank 0
// gathers the checks and, when every rank is fit, they measure all-reduce bandwidth and latency
// over all ranks and then between every pair of nodes. Rank 0 prints one table and the verdict
// (--json: one JSON document instead); every rank exits 0 (passed), 1 (failed: the step should not
// run) or 2 (this rank cannot take part: bad arguments or contract).
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>
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
#include "exchange.hpp"
#include "messages.hpp"
#include "net_facts.hpp"
#include "rank_report.hpp"
#include "report.hpp"
#include "report_json.hpp"
#include "retry.hpp"
#include "schedule.hpp"
#include "slurm_requeue.hpp"
#include "version.hpp"
#include "watch_args.hpp"

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
  bool json = false;       // the result as JSON on stdout instead of the table
  std::string json_file;   // the result as JSON into this file as well
  // --ddp-retries: rank 0 requeues the job without the nodes its failure names.
  std::uint32_t job = 0;
  unsigned retries = 0;
  unsigned restarts = 0;
};

// Rank 0's failure, for --ddp-retries: the nodes it names (maybe none), in a few words.
struct Failure {
  std::vector<std::string> nodes;
  std::string what;
};

// The first failure that names one of NODES (a link "n1 <-> n3: ..."), else the first.
std::string naming(const std::vector<std::string>& failures, const std::vector<std::string>& nodes) {
  const auto names = [](const std::string& text, const std::string& node) {
    for (std::size_t at = text.find(node); at != std::string::npos; at = text.find(node, at + 1)) {
      const std::size_t end = at + node.size();
      if ((at == 0 || text[at - 1] == ' ') && (end == text.size() || text[end] == ':' || text[end] == ' '))
        return true;
    }
    return false;
  };
  for (const auto& f : failures)
    for (const auto& n : nodes)
      if (names(f, n)) return f;
  return failures.front();
}

// Said on the step's output, before the task ends: whether the job goes on, and without which
// nodes (ddp::watch, as the failure watch does for a failure during the program).
void retry_without(const Args& args, const Failure& failure) {
  namespace w = ddp::watch;
  const auto d = w::decide_retry(failure.nodes, "the preflight: " + failure.what,
                                 {args.retries, args.restarts});
  if (d.kind == w::RetryDecision::Kind::Off) return;
  std::cerr << "ddp-preflight: " << d.line << "\n" << std::flush;
  if (d.kind == w::RetryDecision::Kind::NoNode) return;
  // The requeue's own SIGTERM reaches this task too: its outcome is still to be said. In this
  // process (Gloo's and OpenMP's threads may live on: no libslurm in a child of it); the plugin
  // waits longer for a preflight that may requeue (plan/preflight.cpp).
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) std::signal(sig, SIG_IGN);
  for (const auto& line : w::requeue_here(args.job, d)) std::cerr << "ddp-preflight: " << line << "\n";
  std::cerr << std::flush;
  w::let_srun_hear();
}

// Under --ddp-preflight the plugin chooses the command line; a job script asks for the file by
// this variable in the job's environment, which the preflight gets.
constexpr const char* kJsonFileVariable = "DDP_PREFLIGHT_JSON";

// Rank 0's result as JSON, where it was asked for; also when the preflight fails before it has
// measured anything.
void publish_json(const Args& args, const pf::PreflightResult& result) {
  const std::string text =
      pf::result_json(result).dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
  if (args.json) std::cout << text << std::flush;
  if (args.json_file.empty()) return;
  // Whole or not at all: a script that reads it while the step ends never sees half of it.
  const std::string tmp = args.json_file + ".tmp." + std::to_string(getpid());
  std::ofstream out(tmp, std::ios::trunc);
  if (out << text && out.flush() && std::rename(tmp.c_str(), args.json_file.c_str()) == 0) return;
  std::remove(tmp.c_str());
  std::cerr << "ddp-preflight: warning: cannot write " << args.json_file << ": " << std::strerror(errno)
            << " (" << kJsonFileVariable << " or --json-file); the result is in the table above\n";
}

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

std::string node_list(const std::vector<std::string>& nodes) {
  std::string out;
  for (std::size_t i = 0; i < nodes.size() && i < 8; ++i) out += (i ? ", " : "") + nodes[i];
  if (nodes.size() > 8) out += ", ...";
  return out;
}

// `main_rank`: set once this task knows it is rank 0, which alone prints the result.
int run(const Args& args, bool& main_rank, Failure& failure) {
  const auto start = Clock::now();
  const auto wait = ms(args.timeout / 2);
  std::optional<ddp::Context> context;
  try {
    context = ddp::Context::from_environment();
    context->store_scope = "preflight";
  } catch (const ddp::Error& e) {
    std::cerr << "ddp-preflight: this task cannot take part: " << e.what() << "\n";
    return 2;
  }
  const ddp::Context& ctx = *context;
  main_rank = ctx.is_main();
  const std::string host = ctx.hostname_hint.value_or("?");
  const pf::RankReport mine = check_this_rank(ctx, host);
  pf::PreflightResult result;
  result.ranks = ctx.world_size;
  result.rendezvous = ctx.master_addr + ":" + std::to_string(ctx.master_port);
  result.thresholds = args.thresholds;

  std::shared_ptr<ddp::Rendezvous> rdv;
  try {
    rdv = ddp::Rendezvous::meet(ctx, wait);
  } catch (const ddp::Error& e) {
    const std::string reason = "rank " + std::to_string(ctx.rank) + " on " + host + ": " + e.what();
    std::cerr << "ddp-preflight: FAILED: " << reason << "\n";
    if (main_rank) {
      failure.what = reason;
      result.stopped_at = "rendezvous";
      result.reason = reason;
      result.seconds = since(start);
      publish_json(args, result);
    }
    return 1;
  }
  const double met = since(start);

  // Rank 0 reads every rank's checks and decides for all; each rank hears only its own orders.
  std::vector<pf::Check> first_rows;
  if (main_rank)
    first_rows.push_back({"rendezvous", pf::Status::Ok,
                          ctx.master_addr + ":" + std::to_string(ctx.master_port) + ", all ranks met in " +
                              std::to_string(met).substr(0, 4) + " s"});
  const auto checked = pf::exchange_checks(*rdv, mine, std::move(first_rows), args.pairs, wait);
  const auto& rows = checked.rows;
  const auto& orders = checked.orders;
  result.nodes = checked.nodes;
  result.checks = rows;
  if (!orders.measure) {
    if (main_rank) {
      std::string reason = "a check failed on some rank (see the table); the step was stopped before measuring";
      if (!checked.failed_nodes.empty()) {
        result.analysis.exclude = checked.failed_nodes;
        result.analysis.advice = "resubmit without the nodes whose checks failed: sbatch " +
                                 pf::exclude_option(checked.failed_nodes) + " ...";
        reason += ". Fix: " + result.analysis.advice;
      }
      failure.nodes = checked.failed_nodes;
      failure.what = "a check failed (see the table)";
      result.stopped_at = "checks";
      result.reason = reason;
      result.seconds = since(start);
      publish_json(args, result);
      if (!args.json) std::cout << pf::render_checks(rows) << std::flush;
      std::cerr << "ddp-preflight: FAILED: " << reason << "\n";
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

  // Node pairs, one rank per node, disjoint pairs at once: each leader measures its own jobs.
  bench.budget = ms(args.pair_budget);
  std::vector<pf::Measurement> measured;
  for (int r = 0; r < orders.rounds; ++r) {
    group->barrier();
    for (const pf::PairJob& job : orders.jobs) {
      if (job.round != r) continue;
      auto pair = group->subgroup({job.rank_a, job.rank_b}, "preflight/" + std::to_string(r) + "/" +
                                                              std::to_string(job.rank_a) + "-" +
                                                              std::to_string(job.rank_b));
      const auto sweep = ddp::measure_allreduce(*pair, bench);
      pair->shutdown();
      if (ctx.rank == job.rank_a) measured.push_back(pf::measurement("", {job.host_a, job.host_b}, sweep));
    }
  }
  const auto links = pf::exchange_links(*rdv, measured, wait);

  std::string verdict = "pass";
  if (main_rank) {
    std::optional<pf::Measurement> all = pf::measurement("all ranks", {}, world);
    const auto analysis = pf::analyse(all, links, args.thresholds);
    if (!analysis.passed()) {
      verdict = "fail";
      failure.nodes = analysis.exclude;
      failure.what = naming(analysis.failures, analysis.exclude);
    }
    result.passed = analysis.passed();
    result.stopped_at = "measurements";
    result.reason = analysis.passed() ? "" : pf::failure_message(analysis);
    result.backend = group->backend_name();
    result.seconds = since(start);
    result.all = all;
    result.sweep = world;
    result.links = links;
    result.analysis = analysis;
    publish_json(args, result);
    if (!args.json) {
      std::cout << "ddp-preflight: " << ctx.world_size << " ranks on " << result.nodes.size()
                << " node(s) (" << node_list(result.nodes) << "), " << group->backend_name()
                << ", rendezvous " << ctx.master_addr << ":" << ctx.master_port << "\n"
                << pf::render_checks(rows) << pf::render_measurements(all, links, analysis);
      if (args.sweep) std::cout << "all ranks, by size:\n" << pf::render_sweep(world);
      std::cout << pf::render_standings(analysis, links.size());
      if (analysis.passed())
        std::cout << "ddp-preflight: passed in " << std::to_string(since(start)).substr(0, 4) << " s\n";
      std::cout << std::flush;
    }
    if (!analysis.passed()) std::cerr << "ddp-preflight: FAILED: " << pf::failure_message(analysis) << "\n";
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
  app.add_option("--job", args.job, "the job to requeue for --retries (the plugin gives it)");
  app.add_option("--retries", args.retries,
                 "--ddp-retries: when the preflight names nodes, rank 0 requeues the job without "
                 "them, up to this many times in all (the plugin gives it)")
      ->check(CLI::Range(0u, ddp::watch::kMaxRetries));
  app.add_option("--restarts", args.restarts, "how often Slurm requeued the job so far (the plugin gives it)");
  app.add_flag("--sweep", args.sweep, "also print the all-ranks sweep size by size, as all_reduce_perf");
  app.add_flag("--json", args.json,
               "rank 0 prints the result as one JSON document instead of the table (ddp-preflight(1) "
               "has the schema)");
  app.add_option("--json-file", args.json_file,
                 std::string("rank 0 also writes the result as JSON into this file (default: $") +
                     kJsonFileVariable + ", which a job script sets for --ddp-preflight)");
  app.set_version_flag("--version", std::string("ddp-preflight ") + ddp::plan::kVersion);
  if (const char* file = std::getenv(kJsonFileVariable)) args.json_file = file;
  CLI11_PARSE(app, argc, argv);
  bool main_rank = false;
  Failure failure;
  int code = 1;
  try {
    code = run(args, main_rank, failure);
  } catch (const std::exception& e) {
    std::cerr << "ddp-preflight: FAILED: " << e.what() << "\n";
    if (main_rank) {
      failure.what = e.what();
      pf::PreflightResult failed;
      failed.stopped_at = "error";
      failed.reason = e.what();
      publish_json(args, failed);
    }
  }
  // Last: a requeue ends every rank of the job, and rank 0 first says its verdict to the others.
  if (code != 0 && main_rank) retry_without(args, failure);
  return code;
}
