// libddp's rendezvous at scale, on one machine: the real ddp::Rendezvous::meet for every rank,
// rank 0 in a process of its own (its TCPStore server, as in a job), every other rank a thread
// (a light client: the same rendezvous code, no model, no backend) of as few processes as the
// open-file limit allows, on loopback.
// Simulated ranks sit 8 to a node named n0, n1, ... It measures, for one world size:
//   - rendezvous_s: from the start of every rank at once until every rank's meet() returned
//     (setup_s, before it: each process loads LibTorch and starts its ranks' threads, which wait);
//   - rank0_fds: rank 0's open descriptors once it has met every rank; rank0_fd_demand: the
//     open files it fails the rendezvous without, less its readers (at least what it holds, at most 64 more);
//   - with --preflight, then ddp-preflight's exchange (preflight/exchange.hpp, the same code):
//     every rank's checks to rank 0, each rank's orders back, the node leaders' links to rank 0,
//     the verdict to all; preflight_exchange_s is rank 0's time from its meet() to the verdict;
//   - with --missing RANK, that rank (and the next --missing-count - 1) never comes instead: every
//     rank must end with one and the same error naming the first 8 missing with their nodes, and
//     error_bytes_per_rank is the longest of those texts.
//   - with --watch kill|stop, then libddp's peer watch (runtime/src/peer_watch.hpp, the same code)
//     on every rank: rank0_fds once every watch beats, rank0_requests_per_s (what rank 0 answered
//     while nothing failed: its store's requests, counted by the kernel as data segments out on
//     the store's connections, plus the heartbeat's datagrams, rank0_beats_per_s, counted by its
//     watch), then one rank (its own process) is killed, or stopped (frozen: its sockets stay
//     open), and verdict_s is the time until every other rank's watch named it.
//     After a kill every rank calls explain(), as after a collective that failed; after a stop
//     nobody does (NCCL hangs instead), and the watch finds the silence after --peer-timeout.
// Prints one line of key=value pairs; exits 1 when the rendezvous does not do what it must (not
// for speed: bench/scale.sh judges the numbers), 2 when this machine cannot run that many.
//
//   - with --relay, each node's LOCAL_RANK 0 relays its node's store requests (DDP_STORE_RELAY=1);
//     with --no-relay, every rank reaches rank 0 itself (DDP_STORE_RELAY=0); with neither, libddp's
//     default (relayed=1 or 0 in the line printed).
//   ddp-rendezvous-sim --ranks R [--preflight] [--relay|--no-relay] [--missing RANK [--missing-count N]] [--timeout S] [--port P] [--unsealed]
//                      [--watch kill|stop [--peer-timeout S]]
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "ddp/context.hpp"
#include "ddp/error.hpp"
#include "ddp/rendezvous.hpp"
#include "exchange.hpp"
#include "peer_watch.hpp"
#include "rendezvous.hpp"

extern char** environ;

namespace {

using Clock = std::chrono::steady_clock;
constexpr int kRanksPerNode = 8;

struct Options {
  int ranks = 64, missing = -1, missing_count = 1, port = 0;
  double timeout_s = 60;
  bool rank0 = false;  // this process is rank 0 (started by the harness)
  bool preflight = false;  // after meeting, ddp-preflight's exchange
  std::optional<bool> relay;  // DDP_STORE_RELAY: each node's leader relays its ranks' store requests
  bool sealed = true;  // DDP_STORE_KEY given, as the plugin gives it; --unsealed: LibTorch's store as it is
  std::string fault;  // --watch: "kill" or "stop" one rank once every rank's peer watch runs
  double peer_timeout_s = 10;
  int clients_first = 0, clients_end = 0;  // this process runs these simulated ranks
};

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

[[noreturn]] void cannot(const std::string& why) {
  std::fprintf(stderr, "ddp-rendezvous-sim: %s\n", why.c_str());
  std::exit(2);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : nullptr;
    if (a == "--rank0") { o.rank0 = true; continue; }
    if (a == "--preflight") { o.preflight = true; continue; }
    if (a == "--relay") { o.relay = true; continue; }
    if (a == "--no-relay") { o.relay = false; continue; }
    if (a == "--unsealed") { o.sealed = false; continue; }
    if (a == "--clients" && i + 2 < argc) {
      o.clients_first = std::atoi(argv[i + 1]);
      o.clients_end = std::atoi(argv[i + 2]);
      i += 2;
      continue;
    }
    if (v == nullptr)
      cannot("usage: ddp-rendezvous-sim --ranks R [--preflight] [--relay|--no-relay] [--missing RANK [--missing-count N]] "
             "[--watch kill|stop [--peer-timeout S]] [--timeout S] [--port P] [--unsealed]");
    if (a == "--ranks") o.ranks = std::atoi(v);
    else if (a == "--missing") o.missing = std::atoi(v);
    else if (a == "--missing-count") o.missing_count = std::atoi(v);
    else if (a == "--timeout") o.timeout_s = std::atof(v);
    else if (a == "--port") o.port = std::atoi(v);
    else if (a == "--watch") o.fault = v;
    else if (a == "--peer-timeout") o.peer_timeout_s = std::atof(v);
    else cannot("unknown option " + a);
    ++i;
  }
  if (o.ranks < 2 || o.missing == 0 || o.missing_count < 1 || o.missing + o.missing_count > o.ranks ||
      o.timeout_s <= 0 || !(o.fault.empty() || o.fault == "kill" || o.fault == "stop") ||
      o.peer_timeout_s < 1 || (!o.fault.empty() && (o.preflight || o.missing > 0)))
    cannot("--ranks must be at least 2, --missing one of ranks 1..R-1 (and the --missing-count from "
           "there too), --timeout positive, --watch kill or stop (alone), --peer-timeout at least 1");
  return o;
}

ddp::Context context_of(const Options& o, int rank) {
  ddp::Context c;
  c.rank = rank;
  c.world_size = o.ranks;
  c.node_rank = rank / kRanksPerNode;
  c.local_rank = rank % kRanksPerNode;
  c.nodes = (o.ranks + kRanksPerNode - 1) / kRanksPerNode;
  // The last node holds the rest when the world is not a multiple of 8.
  c.local_world_size = std::min(kRanksPerNode, o.ranks - c.node_rank * kRanksPerNode);
  c.master_addr = "127.0.0.1";
  c.master_port = static_cast<std::uint16_t>(o.port);
  c.hostname_hint = "n" + std::to_string(c.node_rank);
  c.store_relay = o.relay;
  // Sealed, as every step the plugin starts is: a secret per run (the relay's names come from it).
  if (o.sealed) {
    char key[65];
    std::snprintf(key, sizeof key, "%060x%04x", 0x5eed, static_cast<unsigned>(o.port) & 0xffff);
    c.store_key = key;
  }
  return c;
}

std::chrono::milliseconds timeout_of(const Options& o) {
  return std::chrono::milliseconds(static_cast<long long>(o.timeout_s * 1000));
}

// The open descriptors of a process ("self": this one, less the directory's own, read now).
int open_descriptors(const std::string& process = "self") {
  int n = 0;
  if (DIR* d = opendir(("/proc/" + process + "/fd").c_str())) {
    while (const dirent* e = readdir(d)) n += e->d_name[0] != '.';
    closedir(d);
    if (process == "self") --n;
  }
  return n;
}

// A process of simulated ranks may use every descriptor its hard limit allows.
void raise_soft_open_files() {
  rlimit limit{};
  getrlimit(RLIMIT_NOFILE, &limit);
  limit.rlim_cur = limit.rlim_max;
  setrlimit(RLIMIT_NOFILE, &limit);
}

// A simulated rank: a thread with a small stack (thousands of them in one process).
pthread_t start_rank_thread(void* (*run)(void*), void* rank, int number) {
  static const pthread_attr_t attr = [] {
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setstacksize(&a, 256 * 1024);
    return a;
  }();
  pthread_t t;
  if (pthread_create(&t, &attr, run, rank) != 0)
    cannot("could not start the thread of rank " + std::to_string(number) + ": " + std::strerror(errno) +
           " (ulimit -u, or memory)");
  return t;
}

// ddp-preflight's exchange after the checks, with what a healthy node's ranks find (one NIC and
// HCA port per GPU) and a link figure for each pair a node's leader is told to measure. Returns
// the verdict every rank hears; rank 0 also counts the rows and links it read.
std::string preflight_exchange(ddp::Rendezvous& rdv, std::chrono::milliseconds timeout, std::size_t* rows,
                               std::size_t* links) {
  namespace pf = ddp::preflight;
  const ddp::Context& c = rdv.context();
  const std::string gpu = "0000:" + std::to_string(16 + c.local_rank) + ":00.0";
  const std::string rail = std::to_string(c.local_rank);
  const pf::RankReport mine{c.rank, c.node_rank, rdv.host(), gpu,
                            {{"interfaces", pf::Status::Ok, "ib" + rail + " (NCCL_SOCKET_IFNAME) up, 200000 Mb/s"},
                             {"hcas", pf::Status::Ok, "mlx5_" + rail + ":1 ACTIVE, 200 Gb/sec (4X HDR)"},
                             {"gpus", pf::Status::Ok, "cuda:" + rail + " " + gpu}}};
  const auto checked = pf::exchange_checks(rdv, mine, {}, "auto", timeout);
  std::vector<pf::Measurement> measured;
  for (const pf::PairJob& job : checked.orders.jobs)
    if (job.rank_a == c.rank)
      measured.push_back({job.host_a + " <-> " + job.host_b, {job.host_a, job.host_b}, 2, 18.5, 23.7, 64u << 20, false});
  const auto all_links = pf::exchange_links(rdv, measured, timeout);
  if (rows != nullptr) *rows = checked.rows.size();
  if (links != nullptr) *links = all_links.size();
  const std::string verdict = rdv.broadcast(checked.orders.measure ? "pass" : "fail", timeout);
  rdv.finish(timeout);
  return verdict;
}

std::string read_line(int fd) {
  std::string line;
  for (char c; read(fd, &c, 1) == 1 && c != '\n';) line += c;
  return line;
}

// Rank 0: meets, says how it went on stdout, and serves the store until the harness closes stdin
// (the other ranks still read the verdict after rank 0's meet() returned).
int run_rank0(const Options& o) {
  std::string line;
  std::printf("up\n");  // LibTorch is loaded
  std::fflush(stdout);
  // "go": every rank starts now, and the clock. Anything else: the harness ended.
  if (read_line(STDIN_FILENO) != "go") _exit(2);
  try {
    auto r = ddp::Rendezvous::meet(context_of(o, 0), timeout_of(o));
    rusage used{};
    getrusage(RUSAGE_SELF, &used);
    char cpu[32];
    std::snprintf(cpu, sizeof cpu, "%.2f", used.ru_utime.tv_sec + used.ru_stime.tv_sec +
                                               (used.ru_utime.tv_usec + used.ru_stime.tv_usec) / 1e6);
    line = "met fds=" + std::to_string(open_descriptors()) + " cpu=" + cpu;
    if (o.preflight) {
      const Clock::time_point met = Clock::now();
      std::size_t rows = 0, links = 0;
      const std::string verdict = preflight_exchange(*r, timeout_of(o), &rows, &links);
      char took[32];
      std::snprintf(took, sizeof took, "%.2f", since(met));
      line += std::string(" preflight=") + took + " verdict=" + verdict + " rows=" + std::to_string(rows) +
              " links=" + std::to_string(links);
    }
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
    char c;
    while (read(STDIN_FILENO, &c, 1) > 0) {
    }
    _exit(0);  // the store's threads need no orderly end here
  } catch (const ddp::Error& e) {
    std::printf("error %s\n", e.what());
    std::fflush(stdout);
    char c;
    while (read(STDIN_FILENO, &c, 1) > 0) {
    }
    _exit(0);
  }
}

// A port nobody uses now, for rank 0's store.
int free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  close(fd);
  return ntohs(a.sin_port);
}

// Rank 0 holds what libddp raises its limit to (rendezvous.hpp: rank0_open_files), and a process
// of simulated ranks about 5 descriptors per rank (LibTorch 1.13's clients open two connections
// each, and a pipe for the thread that serves the second; a fifth while a rank whose connection
// was reset connects again), one more with the peer watch's socket. The hard limit is
// the most a process may raise itself to, unless it runs as root: it decides how many processes
// the simulated ranks need.
int ranks_per_process(const Options& o) {
  rlimit limit{};
  getrlimit(RLIMIT_NOFILE, &limit);
  const rlim_t rank0_needs = ddp::detail::rank0_open_files(context_of(o, 0)).wanted;
  if (limit.rlim_max != RLIM_INFINITY && limit.rlim_max < rank0_needs) {
    const rlimit raised{rank0_needs, rank0_needs};
    if (setrlimit(RLIMIT_NOFILE, &raised) != 0)
      cannot("rank 0 of " + std::to_string(o.ranks) + " ranks needs about " + std::to_string(rank0_needs) +
             " open files, but the hard limit is " + std::to_string(limit.rlim_max) + ": raise it (ulimit -Hn " +
             std::to_string(rank0_needs) + " as root, or nofile in /etc/security/limits.conf) or "
             "simulate fewer ranks");
    getrlimit(RLIMIT_NOFILE, &limit);
  }
  const rlim_t hard = limit.rlim_max;
  limit.rlim_cur = hard;
  if (setrlimit(RLIMIT_NOFILE, &limit) != 0) cannot(std::string("setrlimit: ") + std::strerror(errno));
  if (hard == RLIM_INFINITY || hard > (1u << 20)) return o.ranks;
  const rlim_t per_rank = o.fault.empty() ? 5 : 6;
  return std::max<int>(1, static_cast<int>((hard - 256) / per_rank));
}

// Where a process's ranks wait until every process has started all of its ranks: a job's ranks
// start on their own nodes at about the same moment, not one after another behind this process's
// thread starts (which on 2 cores, with thousands of ranks already running, take seconds).
struct Gate {
  std::mutex mu;
  std::condition_variable opened;
  bool open = false;
  void pass() {
    std::unique_lock<std::mutex> lock(mu);
    opened.wait(lock, [&] { return open; });
  }
  void let_through() {
    std::lock_guard<std::mutex> hold(mu);
    open = true;
    opened.notify_all();
  }
};

struct Rank {
  Gate* gate = nullptr;
  const Options* options = nullptr;
  int rank = 0;
  std::shared_ptr<ddp::Rendezvous> met;  // kept: its store connection stays open until the end
  std::string error;
  bool failed = false;
};

void* run_rank(void* arg) {
  auto* r = static_cast<Rank*>(arg);
  r->gate->pass();
  try {
    r->met = ddp::Rendezvous::meet(context_of(*r->options, r->rank), timeout_of(*r->options));
    if (r->options->preflight) {
      const std::string verdict = preflight_exchange(*r->met, timeout_of(*r->options), nullptr, nullptr);
      if (verdict != "pass") throw ddp::Error("the preflight's verdict was '" + verdict + "'");
    }
  } catch (const ddp::Error& e) {
    r->failed = true;
    r->error = e.what();
  } catch (const std::exception& e) {
    r->failed = true;
    r->error = std::string("not a ddp::Error: ") + e.what();
  }
  return nullptr;
}

bool is_missing(const Options& o, int r) {
  return o.missing > 0 && r >= o.missing && r < o.missing + o.missing_count;
}

// A process of simulated ranks [first, end): each a thread with a small stack. Says "ready" on
// stdout once every thread waits at the gate, lets them meet when a line comes on stdin, then
// says how they ended: "ranks met=M failed=F longest=L", each different error ("error TEXT", at
// most 3), then "end".
int run_clients(const Options& o, int first, int end) {
  raise_soft_open_files();
  std::vector<Rank> all(static_cast<std::size_t>(end - first));
  std::vector<pthread_t> threads;
  Gate gate;
  for (int r = first; r < end; ++r) {
    if (is_missing(o, r)) continue;
    Rank& rank = all[static_cast<std::size_t>(r - first)];
    rank.gate = &gate;
    rank.options = &o;
    rank.rank = r;
    threads.push_back(start_rank_thread(run_rank, &rank, r));
  }
  std::printf("ready\n");
  std::fflush(stdout);
  if (read_line(STDIN_FILENO) != "go") _exit(2);  // the harness ended before the start
  gate.let_through();
  for (pthread_t t : threads) pthread_join(t, nullptr);
  std::size_t met = 0, failed = 0, longest = 0;
  std::vector<std::string> errors;
  for (const Rank& r : all) {
    if (r.options == nullptr) continue;
    if (!r.failed) {
      ++met;
      continue;
    }
    ++failed;
    longest = std::max(longest, r.error.size());
    if (errors.size() < 3 && std::find(errors.begin(), errors.end(), r.error) == errors.end())
      errors.push_back(r.error);
  }
  std::printf("ranks met=%zu failed=%zu longest=%zu\n", met, failed, longest);
  for (const auto& e : errors) std::printf("error %s\n", e.c_str());
  std::printf("end\n");
  std::fflush(stdout);
  // Ends without destroying thousands of stores one by one (each joins its threads).
  _exit(0);
}

// This program again, as rank 0 or a process of simulated ranks: its stdout (and stdin) piped here.
pid_t spawn_self(const std::vector<std::string>& extra, const Options& o, int& out_fd, int* in_fd) {
  int out[2], in[2];
  // Close-on-exec: no process of ranks holds another's stdin open, so each reads the end of the
  // harness's.
  if (pipe2(out, O_CLOEXEC) != 0 || pipe2(in, O_CLOEXEC) != 0) cannot("pipe failed");
  std::vector<std::string> args{"/proc/self/exe", "--ranks", std::to_string(o.ranks), "--port",
                                std::to_string(o.port), "--timeout", std::to_string(o.timeout_s)};
  if (o.missing > 0) {
    args.insert(args.end(), {"--missing", std::to_string(o.missing), "--missing-count",
                             std::to_string(o.missing_count)});
  }
  if (o.preflight) args.push_back("--preflight");
  if (o.relay) args.push_back(*o.relay ? "--relay" : "--no-relay");
  if (!o.sealed) args.push_back("--unsealed");
  if (!o.fault.empty()) args.insert(args.end(), {"--watch", o.fault, "--peer-timeout", std::to_string(o.peer_timeout_s)});
  args.insert(args.end(), extra.begin(), extra.end());
  std::vector<char*> argp;
  for (auto& a : args) argp.push_back(a.data());
  argp.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, in[0], STDIN_FILENO);
  posix_spawn_file_actions_addclose(&actions, out[0]);
  posix_spawn_file_actions_addclose(&actions, in[1]);
  // Each process in a session of its own, as each group of nodes (and rank 0) is a machine of its
  // own in a job: where the kernel shares the CPUs between sessions first (autogroups, on by
  // default in Debian's kernels), thousands of simulated ranks' threads in one process do not
  // starve rank 0's few, as no real rank 0 is starved by the ranks of other nodes.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID);
  pid_t pid = 0;
  if (posix_spawn(&pid, "/proc/self/exe", &actions, &attr, argp.data(), environ) != 0)
    cannot("could not start a process of simulated ranks");
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&actions);
  close(out[1]);
  close(in[0]);
  out_fd = out[0];
  if (in_fd != nullptr) *in_fd = in[1];
  else close(in[1]);
  return pid;
}

// --watch: every rank meets, then runs libddp's peer watch until the fault, and says when its
// watch named the lost rank.
int victim_of(const Options& o) { return o.ranks / 2 + (o.ranks > 8 ? 3 : 0); }

struct Watcher {
  const Options* options = nullptr;
  int rank = 0;
  std::shared_ptr<ddp::Rendezvous> met;
  std::unique_ptr<ddp::detail::PeerWatch> watch;
  std::string error;
  std::optional<std::string> verdict;
  double verdict_s = 0;
};

struct WatchersState {
  std::mutex mutex;
  std::condition_variable changed;
  std::size_t settled = 0;  // ranks that started their watch or failed to
  bool fault = false;
} watchers_state;

void* watch_rank(void* arg) {
  auto* w = static_cast<Watcher*>(arg);
  const Options& o = *w->options;
  try {
    w->met = ddp::Rendezvous::meet(context_of(o, w->rank), timeout_of(o));
    ddp::detail::PeerWatchOptions options;
    options.peer_timeout = std::chrono::milliseconds(static_cast<long long>(o.peer_timeout_s * 1000));
    options.connect_timeout = timeout_of(o);  // the process group's time-out in a job
    options.exit_grace = options.explained_grace = std::chrono::milliseconds(0);  // measured, not ended
    w->watch = std::make_unique<ddp::detail::PeerWatch>(*w->met, options);
  } catch (const std::exception& e) {
    w->error = e.what();
  }
  std::unique_lock<std::mutex> lock(watchers_state.mutex);
  ++watchers_state.settled;
  watchers_state.changed.notify_all();
  if (!w->watch) return nullptr;
  watchers_state.changed.wait(lock, [] { return watchers_state.fault; });
  lock.unlock();
  // A killed peer fails every collective at once (Gloo: its connections close): each rank asks.
  if (o.fault == "kill") w->watch->explain();
  return nullptr;
}

// A process of watching ranks [first, end) (rank 0 and its store when first is 0). Says
// "watching met=M failed=F" (and at most 3 "error TEXT") once every one of its ranks watches;
// on "beats", "beats N" (rank 0's watch took N beats so far; 0 from other processes); then, on "fault T" (T: the fault's steady-clock time in ns) on stdin, "verdicts n=N of M
// latest_s=S" once every rank's watch has a verdict or the wait ends, at most 3 "verdict TEXT",
// and "end". Serves until stdin closes.
[[noreturn]] void run_watchers(const Options& o, int first, int end) {
  raise_soft_open_files();
  std::vector<Watcher> all(static_cast<std::size_t>(end - first));
  for (int r = first; r < end; ++r) {
    Watcher& w = all[static_cast<std::size_t>(r - first)];
    w.options = &o;
    w.rank = r;
    pthread_detach(start_rank_thread(watch_rank, &w, r));
  }
  std::vector<std::string> errors;
  std::size_t failed = 0;
  {
    std::unique_lock<std::mutex> lock(watchers_state.mutex);
    watchers_state.changed.wait(lock, [&] { return watchers_state.settled == all.size(); });
    for (const Watcher& w : all) {
      if (w.watch) continue;
      ++failed;
      if (errors.size() < 3 && std::find(errors.begin(), errors.end(), w.error) == errors.end())
        errors.push_back(w.error);
    }
  }
  std::printf("watching met=%zu failed=%zu\n", all.size() - failed, failed);
  for (const auto& e : errors) std::printf("error %s\n", e.c_str());
  std::fflush(stdout);
  std::string said;
  // "beats": rank 0's process says how many beats its watch has taken so far.
  while ((said = read_line(STDIN_FILENO)) == "beats") {
    std::printf("beats %llu\n", first == 0 && all.front().watch
                                     ? static_cast<unsigned long long>(all.front().watch->beats_heard())
                                     : 0ULL);
    std::fflush(stdout);
  }
  long long fault_ns = 0;
  if (std::sscanf(said.c_str(), "fault %lld", &fault_ns) == 1) {
    const Clock::time_point fault_at{std::chrono::nanoseconds(fault_ns)};
    {
      std::lock_guard<std::mutex> lock(watchers_state.mutex);
      watchers_state.fault = true;
    }
    watchers_state.changed.notify_all();
    const auto wait = std::chrono::duration<double>(o.fault == "kill" ? 60 : o.peer_timeout_s + 60);
    std::size_t heard = 0;
    double latest = 0;
    while (heard < all.size() - failed && Clock::now() - fault_at < wait) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      for (Watcher& w : all) {
        if (!w.watch || w.verdict) continue;
        w.verdict = w.watch->verdict();
        if (!w.verdict) continue;
        w.verdict_s = std::chrono::duration<double>(Clock::now() - fault_at).count();
        latest = std::max(latest, w.verdict_s);
        ++heard;
      }
    }
    std::printf("verdicts n=%zu of %zu latest_s=%.2f\n", heard, all.size() - failed, latest);
    std::vector<std::string> verdicts;
    for (const Watcher& w : all)
      if (w.verdict && verdicts.size() < 3 && std::find(verdicts.begin(), verdicts.end(), *w.verdict) == verdicts.end())
        verdicts.push_back(*w.verdict);
    for (const auto& v : verdicts) std::printf("verdict %s\n", v.c_str());
    std::printf("end\n");
    std::fflush(stdout);
    while (!read_line(STDIN_FILENO).empty()) {
    }
  }
  _exit(0);  // thousands of watches need no orderly end
}

// Requests rank 0's store has answered so far: the data segments out on the connections its port
// accepted, as the kernel counts them (ss, tcp_info). An answer to add or check is one segment, the
// watch's every request while nothing fails (a get's is two, a set has none on LibTorch 1.13);
// requests themselves are not counted, as 1.13's clients send one in two segments.
long long store_requests(int port) {
  const std::string command = "ss -Htin state established '( sport = :" + std::to_string(port) + " )'";
  FILE* ss = popen(command.c_str(), "r");
  if (ss == nullptr) cannot("could not run ss (iproute2)");
  long long total = 0;
  char line[4096];
  while (std::fgets(line, sizeof line, ss) != nullptr)
    if (const char* at = std::strstr(line, " data_segs_out:")) total += std::atoll(at + 15);
  if (pclose(ss) != 0) cannot("ss failed: is iproute2 installed?");
  return total;
}

struct WatchProcess {
  pid_t pid = 0;
  int out = -1, in = -1;
  bool victim = false;
};

// Reads a process's lines up to `last` (a prefix), keeping "error"/"verdict" texts; returns the
// first line that starts with `key`, or "" when the process ended first.
std::string read_until(const WatchProcess& p, const std::string& key, const std::string& last,
                       std::vector<std::string>& texts) {
  std::string found;
  for (std::string line;;) {
    line = read_line(p.out);
    if (line.empty()) return found;
    if (line.rfind(key, 0) == 0) found = line;
    else if (line.rfind("error ", 0) == 0 || line.rfind("verdict ", 0) == 0) {
      const std::string text = line.substr(line.find(' ') + 1);
      if (std::find(texts.begin(), texts.end(), text) == texts.end()) texts.push_back(text);
    }
    if (line.rfind(last, 0) == 0) return found;
  }
}

int run_watch_harness(const Options& o, int per_process) {
  const int victim = victim_of(o);
  std::vector<WatchProcess> processes;
  const auto start = [&](int first, int end) {
    WatchProcess p;
    p.pid = spawn_self({"--clients", std::to_string(first), std::to_string(end)}, o, p.out, &p.in);
    p.victim = first == victim && end == victim + 1;
    processes.push_back(p);
  };
  start(0, 1);  // rank 0 and its store
  for (int first = 1; first < o.ranks; first += per_process) {
    const int end = std::min(o.ranks, first + per_process);
    if (first <= victim && victim < end) {
      if (first < victim) start(first, victim);
      start(victim, victim + 1);
      if (victim + 1 < end) start(victim + 1, end);
    } else {
      start(first, end);
    }
  }
  const Clock::time_point began = Clock::now();
  std::vector<std::string> problems, errors;
  std::size_t watching = 0;
  for (const auto& p : processes) {
    std::size_t met = 0, failed = 0;
    const std::string line = read_until(p, "watching ", "watching ", errors);
    if (std::sscanf(line.c_str(), "watching met=%zu failed=%zu", &met, &failed) != 2)
      problems.push_back("a process of simulated ranks ended before its ranks watched");
    watching += met;
    if (failed > 0) problems.push_back(std::to_string(failed) + " ranks could not start watching");
  }
  for (const auto& e : errors) problems.push_back("e.g.: " + e);
  const double setup_s = since(began);
  const int fds = open_descriptors(std::to_string(processes[0].pid));
  // Nothing fails yet: what every watch asks of rank 0, its store and its heartbeat.
  const auto beats = [&] {
    const WatchProcess& rank0 = processes.front();
    unsigned long long n = 0;
    if (write(rank0.in, "beats\n", 6) != 6 ||
        std::sscanf(read_until(rank0, "beats ", "beats ", errors).c_str(), "beats %llu", &n) != 1)
      problems.push_back("rank 0's process did not say how many beats it took");
    return static_cast<double>(n);
  };
  std::this_thread::sleep_for(std::chrono::seconds(2));
  const long long before = store_requests(o.port);
  const double beats_before = beats();
  const Clock::time_point counted = Clock::now();
  std::this_thread::sleep_for(std::chrono::seconds(5));
  const double store_per_s = (store_requests(o.port) - before) / since(counted);
  const double beats_per_s = (beats() - beats_before) / since(counted);

  const WatchProcess& lost = *std::find_if(processes.begin(), processes.end(), [](auto& p) { return p.victim; });
  kill(lost.pid, o.fault == "kill" ? SIGKILL : SIGSTOP);
  const auto fault_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
  const std::string fault = "fault " + std::to_string(fault_ns) + "\n";
  for (const auto& p : processes)
    if (!p.victim && write(p.in, fault.data(), fault.size()) != static_cast<ssize_t>(fault.size()))
      problems.push_back("a process of simulated ranks ended before the fault");
  std::size_t heard = 0;
  double latest = 0;
  std::vector<std::string> verdicts;
  for (const auto& p : processes) {
    if (p.victim) continue;
    std::size_t n = 0, of = 0;
    double s = 0;
    const std::string line = read_until(p, "verdicts ", "end", verdicts);
    if (std::sscanf(line.c_str(), "verdicts n=%zu of %zu latest_s=%lf", &n, &of, &s) != 3)
      problems.push_back("a process of simulated ranks ended before its verdicts");
    heard += n;
    latest = std::max(latest, s);
  }
  kill(lost.pid, SIGKILL);
  for (const auto& p : processes) close(p.in);

  const std::string named = "rank " + std::to_string(victim) + " of " + std::to_string(o.ranks) + " (on n" +
                            std::to_string(victim / kRanksPerNode) + ")";
  if (heard != watching - 1)
    problems.push_back(std::to_string(watching - 1 - heard) + " ranks had no verdict in time");
  // A kill is found by the census the failed collectives asked for, a stop by the silence.
  const std::string how = o.fault == "kill" ? "it was killed, crashed" : "no heartbeat for";
  for (const auto& v : verdicts)
    if (v.find(named) == std::string::npos || v.find(how) == std::string::npos)
      problems.push_back("a verdict that does not name " + named + " as '" + how + "': " + v);
  if (verdicts.size() > 1) problems.push_back("the ranks' verdicts differ");
  std::printf("ranks=%d fault=%s watch_setup_s=%.2f rank0_fds=%d rank0_requests_per_s=%.0f rank0_beats_per_s=%.0f "
              "verdict_s=%.2f peer_timeout_s=%g verdict_bytes=%zu processes=%zu\n",
              o.ranks, o.fault.c_str(), setup_s, fds, store_per_s + beats_per_s, beats_per_s, latest, o.peer_timeout_s,
              verdicts.empty() ? 0 : verdicts.front().size(), processes.size());
  if (!verdicts.empty()) std::fprintf(stderr, "verdict: %s\n", verdicts.front().c_str());
  for (const auto& p : problems) std::fprintf(stderr, "FAIL: %s\n", p.c_str());
  std::fflush(stdout);
  std::fflush(stderr);
  return problems.empty() ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Options o = parse(argc, argv);
  if (o.rank0) return run_rank0(o);
  if (o.clients_end > 0 && !o.fault.empty()) run_watchers(o, o.clients_first, o.clients_end);
  if (o.clients_end > 0) return run_clients(o, o.clients_first, o.clients_end);
  // A process of ranks that ended is found by its silence, not by a write that ends the harness.
  signal(SIGPIPE, SIG_IGN);
  const int per_process = ranks_per_process(o);
  if (o.port == 0) o.port = free_port();
  if (!o.fault.empty()) return run_watch_harness(o, per_process);

  // Rank 0 in its own process; it serves the store until its stdin closes.
  int rank0_out = -1, rank0_in = -1;
  spawn_self({"--rank0"}, o, rank0_out, &rank0_in);
  if (read_line(rank0_out) != "up") cannot("rank 0 did not start");

  // Every process loads LibTorch and starts its ranks' threads first; then all ranks meet at once.
  const Clock::time_point setup = Clock::now();
  std::vector<int> outs, ins{rank0_in};
  for (int first = 1; first < o.ranks; first += per_process) {
    int out = -1, in = -1;
    const int end = std::min(o.ranks, first + per_process);
    spawn_self({"--clients", std::to_string(first), std::to_string(end)}, o, out, &in);
    outs.push_back(out);
    ins.push_back(in);
  }
  for (const int out : outs)
    if (read_line(out) != "ready") cannot("a process of simulated ranks could not start its ranks");
  const double setup_s = since(setup);
  const Clock::time_point start = Clock::now();
  for (const int in : ins)
    if (write(in, "go\n", 3) != 3) cannot("a process of simulated ranks ended before the start");
  std::size_t met = 0, failed = 0, longest = 0;
  std::vector<std::string> errors;
  for (const int out : outs) {
    for (std::string line; (line = read_line(out)) != "end";) {
      if (line.empty()) {
        errors.push_back("a process of simulated ranks ended without a word");
        break;
      }
      std::size_t m = 0, f = 0, l = 0;
      if (std::sscanf(line.c_str(), "ranks met=%zu failed=%zu longest=%zu", &m, &f, &l) == 3) {
        met += m;
        failed += f;
        longest = std::max(longest, l);
      } else if (line.rfind("error ", 0) == 0 &&
                 std::find(errors.begin(), errors.end(), line.substr(6)) == errors.end()) {
        errors.push_back(line.substr(6));
      }
    }
  }
  const double all_done = since(start);
  const std::string said = read_line(rank0_out);  // "met fds=N cpu=S" or "error TEXT"

  std::vector<std::string> problems;
  std::printf("ranks=%d relayed=%d", o.ranks, ddp::detail::relayed(context_of(o, 1)) ? 1 : 0);
  if (o.missing < 0) {
    if (said.rfind("met fds=", 0) != 0) problems.push_back("rank 0: " + said);
    for (const auto& e : errors) problems.push_back(std::to_string(failed) + " ranks failed, e.g.: " + e);
    // "met fds=N cpu=S [preflight=S verdict=V rows=N links=N]": rank 0's descriptors, the CPU
    // seconds it (its store) spent meeting, and the preflight exchange's time and result.
    const auto value = [&](const std::string& key) {
      const auto at = said.find(" " + key + "=");
      if (said.rfind("met ", 0) != 0 || at == std::string::npos) return std::string("?");
      const auto from = at + key.size() + 2;
      return said.substr(from, said.find(' ', from) - from);
    };
    // What rank 0 fails the rendezvous without (rendezvous.hpp) against what it holds once met:
    // its readers come later, with the first gather (the preflight's).
    const auto files = ddp::detail::rank0_open_files(context_of(o, 0));
    std::printf(" rendezvous_s=%.2f rank0_fds=%s rank0_fd_demand=%llu rank0_cpu_s=%s", all_done,
                value("fds").c_str(), static_cast<unsigned long long>(files.needed), value("cpu").c_str());
    // Unrelayed, every rank connects itself: the demand is the use by design.
    if (ddp::detail::relayed(context_of(o, 1)) && value("fds") != "?") {
      const std::uint64_t to_meet = files.needed - files.readers, held = std::stoull(value("fds"));
      if (to_meet > held + 64 || to_meet < held)
        problems.push_back("rank 0 demands " + std::to_string(to_meet) + " open files to meet, but holds " +
                           value("fds") + " (the demand must cover the use, and exceed it by 64 at most)");
    }
    if (o.preflight) {
      const int nodes = (o.ranks + kRanksPerNode - 1) / kRanksPerNode;
      // Rings beyond 16 nodes (pair_mode "auto"): n links; all pairs up to it; one for two nodes.
      const int links = nodes > 16 ? nodes : nodes * (nodes - 1) / 2;
      if (value("verdict") != "pass") problems.push_back("the preflight did not pass: " + said);
      // The contract row, then interfaces, hcas and gpus.
      if (value("rows") != "4") problems.push_back("rank 0's table has " + value("rows") + " rows, not 4");
      if (value("links") != std::to_string(links))
        problems.push_back("rank 0 read " + value("links") + " links, not " + std::to_string(links));
      std::printf(" preflight_exchange_s=%s preflight_rows=%s", value("preflight").c_str(), value("rows").c_str());
    }
  } else {
    // Every rank ends with rank 0's words, which name the missing ranks.
    const std::string verdict = said.rfind("error ", 0) == 0 ? said.substr(6) : "";
    if (verdict.empty()) problems.push_back("rank 0 did not fail: " + said);
    longest = std::max(longest, verdict.size());
    // The first 8 missing named ("rank(s) 155-162 and 12 more of 300"), each with its node.
    const int named = std::min(o.missing_count, 8);
    std::string list = std::to_string(o.missing);
    if (named > 1) list += "-" + std::to_string(o.missing + named - 1);
    if (o.missing_count > named) list += " and " + std::to_string(o.missing_count - named) + " more";
    const std::string last = std::to_string(o.missing + named - 1);
    if (verdict.find("rank(s) " + list + " of " + std::to_string(o.ranks) + " never arrived") ==
            std::string::npos ||
        (verdict.find(" rank " + last + ";") == std::string::npos &&
         verdict.find("-" + last + ";") == std::string::npos))
      problems.push_back("rank 0's words do not name ranks " + list + ": " + verdict);
    if (met > 0) problems.push_back(std::to_string(met) + " ranks met although ranks were missing");
    for (const auto& e : errors)
      if (e != verdict) problems.push_back("a rank ended otherwise than rank 0: " + e);
    std::printf(" missing=%d failed_s=%.2f error_bytes_per_rank=%zu ranks_failed=%zu", o.missing,
                all_done, longest, failed + (verdict.empty() ? 0 : 1));
  }
  std::printf(" processes=%zu setup_s=%.2f\n", outs.size(), setup_s);
  for (const int in : ins) close(in);
  if (o.missing >= 0) std::fprintf(stderr, "rank 0 said: %s\n", said.c_str());
  for (const auto& p : problems) std::fprintf(stderr, "FAIL: %s\n", p.c_str());
  std::fflush(stdout);
  std::fflush(stderr);
  return problems.empty() ? 0 : 1;
}
