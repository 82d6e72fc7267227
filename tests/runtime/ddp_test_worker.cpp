// One rank of a multi-process runtime test, started by multiprocess_test.cpp with a torchrun-style
// environment. Exit status 0 = the scenario held; the output says what was seen.
#include <dirent.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <chrono>
#include <cstring>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <torch/torch.h>
#include <torch/version.h>

#include "ddp/allreduce_bench.hpp"
#include "ddp/context.hpp"
#include "ddp/error.hpp"
#include "ddp/grad_sync.hpp"
#include "ddp/process_group.hpp"
#include "ddp/rendezvous.hpp"

namespace {

// A model without batch norm, in double precision so that "equal" can mean 1e-6.
struct Net : torch::nn::Module {
  Net() {
    fc1 = register_module("fc1", torch::nn::Linear(20, 32));
    fc2 = register_module("fc2", torch::nn::Linear(32, 10));
    unused = register_parameter("unused", torch::ones({3}));  // never in the graph
  }
  torch::Tensor forward(const torch::Tensor& x) { return fc2(torch::tanh(fc1(x))); }
  torch::nn::Linear fc1{nullptr}, fc2{nullptr};
  torch::Tensor unused;
};

int grads(const ddp::Context& ctx, std::size_t bucket_bytes, bool overlap) {
  constexpr int kPerRank = 8;
  auto group = ddp::ProcessGroup::create(ctx);
  torch::manual_seed(1000 + ctx.rank);  // every rank starts different: the broadcast must fix it
  auto model = std::make_shared<Net>();
  model->to(torch::kFloat64);
  torch::manual_seed(0);
  auto reference = std::make_shared<Net>();  // what rank 0 would have built with seed 0
  reference->to(torch::kFloat64);
  if (ctx.rank == 0)
    for (std::size_t i = 0; i < model->parameters().size(); ++i)
      model->parameters()[i].data().copy_(reference->parameters()[i].data());

  ddp::GradientSynchronizer sync(model->parameters(), group, {bucket_bytes, overlap});
  sync.broadcast_from_main(model->parameters());
  torch::optim::SGD opt(model->parameters(), 0.1), ref_opt(reference->parameters(), 0.1);

  double worst = 0;
  for (int step = 0; step < 3; ++step) {
    torch::manual_seed(77 + step);  // the same global batch on every rank
    const auto x = torch::randn({kPerRank * ctx.world_size, 20}, torch::kFloat64);
    const auto y = torch::randint(0, 10, {kPerRank * ctx.world_size}, torch::kLong);
    const auto mine = torch::indexing::Slice(ctx.rank * kPerRank, (ctx.rank + 1) * kPerRank);

    // In place, as GradientSynchronizer asks (and ddp-cifar100's Sgd does): torch::optim's
    // zero_grad() zeroes in place on LibTorch 1.13 but drops the gradients on 2.x
    // (set_to_none=true), which would cost a copy into the buckets every step.
    for (auto& p : model->parameters())
      if (p.grad().defined()) p.grad().zero_();
    torch::nn::functional::cross_entropy(model->forward(x.index({mine})), y.index({mine})).backward();
    sync.finish();
    ref_opt.zero_grad();
    torch::nn::functional::cross_entropy(reference->forward(x), y).backward();

    for (std::size_t i = 0; i < model->parameters().size(); ++i) {
      auto got = model->parameters()[i].grad();
      auto want = reference->parameters()[i].grad();
      if (!want.defined()) want = torch::zeros_like(model->parameters()[i]);
      if (!got.defined()) {
        std::printf("rank %d step %d: parameter %zu has no gradient\n", ctx.rank, step, i);
        return 1;
      }
      worst = std::max(worst, (got - want).abs().max().item<double>());
    }
    opt.step();
    ref_opt.step();
  }
  // After the first step the gradients live in the buckets: nothing is copied any more.
  std::printf("rank %d grads buckets=%zu overlap=%d maxdiff=%.3g copied=%zu\n", ctx.rank,
              sync.stats().buckets, overlap ? 1 : 0, worst, sync.stats().copied);
  group->shutdown();
  return worst < 1e-6 ? 0 : 1;
}

int meet(const ddp::Context& ctx) {
  auto group = ddp::ProcessGroup::create(ctx);
  const double mean_rank = group->mean(static_cast<double>(ctx.rank));
  group->barrier();
  std::printf("rank %d met %d ranks, mean rank %.2f\n", ctx.rank, ctx.world_size, mean_rank);
  group->shutdown();
  return 0;
}

// This process's open descriptors, and among them the TCP connections its store server accepted
// (local port `port`, established): one per store client connection that reaches rank 0.
std::pair<int, int> descriptors_and_store_connections(int port) {
  std::set<std::string> sockets;
  int open = 0;
  if (DIR* d = opendir("/proc/self/fd")) {
    while (const dirent* e = readdir(d)) {
      if (e->d_name[0] == '.') continue;
      ++open;
      char target[64] = {};
      const std::string link = std::string("/proc/self/fd/") + e->d_name;
      if (readlink(link.c_str(), target, sizeof target - 1) > 0 && std::strncmp(target, "socket:[", 8) == 0)
        sockets.insert(std::string(target + 8, std::strchr(target, ']')));
    }
    closedir(d);
  }
  char local_port[8];
  std::snprintf(local_port, sizeof local_port, ":%04X", port);
  int accepted = 0;
  for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream in(table);
    std::string line, slot, local, remote, state, skip, inode;
    std::getline(in, line);  // the header
    while (std::getline(in, line)) {
      std::istringstream fields(line);
      // sl local rem st tx:rx tr:when retrnsmt uid timeout inode
      fields >> slot >> local >> remote >> state >> skip >> skip >> skip >> skip >> skip >> inode;
      if (state == "01" && local.size() > 5 && local.compare(local.size() - 5, 5, local_port) == 0 && sockets.count(inode))
        ++accepted;
    }
  }
  return {open - 1, accepted};  // less the directory's own descriptor
}

// Every rank meets and holds on while rank 0 counts what it holds: its descriptors, and its store's
// connections (through the node leaders' relays unless DDP_STORE_RELAY=0).
int descriptors(const ddp::Context& ctx) {
  auto group = ddp::ProcessGroup::create(ctx);
  group->barrier();
  if (ctx.rank == 0) {
    const auto [open, store] = descriptors_and_store_connections(ctx.master_port);
    std::printf("rank 0 of %d holds %d descriptors, %d store connections\n", ctx.world_size, open, store);
    std::fflush(stdout);
  }
  group->barrier();
  group->shutdown();
  return 0;
}

// Rank `victim` goes away after meeting the others (`how`: kill = SIGKILL, stop = SIGSTOP, leave =
// returns with an error); the others keep all-reducing and must fail, naming it.
int lose(const ddp::Context& ctx, const std::string& how, int victim) {
  auto group = ddp::ProcessGroup::create(ctx);
  group->barrier();
  if (ctx.rank == victim) {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    if (how == "kill") raise(SIGKILL);
    if (how == "stop") raise(SIGSTOP);
    std::printf("rank %d leaves\n", ctx.rank);
    return 4;
  }
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    auto t = torch::ones({1000});
    group->allreduce_sum(t, "steps").wait();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (std::chrono::steady_clock::now() - start > std::chrono::seconds(120)) {
      std::printf("rank %d: nothing failed\n", ctx.rank);
      return 0;
    }
  }
}

// Ranks that end at different times, without shutdown(), after their last collective: the watch
// must not mistake an early finisher (rank 0 with the store, too) for a lost rank.
int end_apart(const ddp::Context& ctx) {
  auto group = ddp::ProcessGroup::create(ctx);
  group->barrier();
  if (ctx.rank != 0) std::this_thread::sleep_for(std::chrono::seconds(2 + 2 * ctx.rank));
  std::printf("rank %d done\n", ctx.rank);
  return 0;
}

// Collectives for `seconds` (of the clock, stops included) after saying "running", then a clean
// end: the test stops and resumes the whole job meanwhile, as scontrol suspend does.
int suspended(const ddp::Context& ctx, int seconds) {
  auto group = ddp::ProcessGroup::create(ctx);
  group->barrier();
  std::printf("rank %d running\n", ctx.rank);
  std::fflush(stdout);
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  // The ranks agree on the last step: each left the barrier at its own moment, and after a
  // resume each node thaws at its own, so deadlines read alone would send one rank to shutdown's
  // barrier while another waits in one more all-reduce, both forever. A rank past its deadline
  // says so in the all-reduce, and every rank stops after the step in which any did.
  for (bool more = true; more;) {
    auto t = torch::ones({1000});
    t[0].fill_(std::chrono::steady_clock::now() < until ? 0 : 1);
    group->allreduce_sum(t, "steps").wait();
    more = t[0].item<float>() == 0;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  group->shutdown();
  std::printf("rank %d done\n", ctx.rank);
  return 0;
}

// The rendezvous alone: texts gathered, broadcast and scattered through the store, no backend.
// With `absent` >= 0, that rank meets and then leaves without a word while the others exchange.
int exchange(const ddp::Context& ctx, int absent) {
  using namespace std::chrono_literals;
  auto rdv = ddp::Rendezvous::meet(ctx, 4s);
  const auto name = [](const std::vector<std::string>& texts) {
    std::string joined;
    for (const auto& t : texts) joined += (joined.empty() ? "" : ",") + t.substr(0, t.find('@'));
    return joined;
  };
  if (ctx.rank == absent) {
    std::this_thread::sleep_for(5s);
    return 0;
  }
  if (absent >= 0) {
    // Every rank calls both, in the same order; only rank 0 waits in the gather (1 s), and the
    // all-gather (3 s) then names the absent rank on every rank that waits for it.
    try {
      rdv->gather("g", 1s);
    } catch (const ddp::Error& e) {
      std::printf("rank %d gather: %s\n", ctx.rank, e.what());
    }
    rdv->all_gather("a", 3s);  // throws
    return 0;
  }
  const auto all = rdv->all_gather("r" + std::to_string(ctx.rank) + "@" + rdv->host(), 4s);
  const std::string word = rdv->broadcast(ctx.rank == 0 ? "from-zero" : "ignored", 4s);
  const auto to_zero = rdv->gather("g" + std::to_string(ctx.rank), 4s);
  std::vector<std::string> parts;
  if (ctx.rank == 0)
    for (int r = 0; r < ctx.world_size; ++r) parts.push_back("s" + std::to_string(r));
  const std::string part = rdv->scatter(parts, 4s);
  rdv->finish(4s);
  std::printf("rank %d gathered %s heard %s; rank 0 gathered [%s]; got %s\n", ctx.rank,
              name(all).c_str(), word.c_str(), name(to_zero).c_str(), part.c_str());
  return 0;
}

// The bandwidth sweep over all ranks, then over the subgroup of the first and the last rank
// (the ranks between only watch), then a world collective again.
int bench(const ddp::Context& ctx) {
  auto group = ddp::ProcessGroup::create(ctx);
  ddp::AllreduceBenchOptions options;
  options.max_bytes = 1 << 20;
  options.budget = std::chrono::milliseconds(1500);
  const auto all = ddp::measure_allreduce(*group, options);
  std::printf("rank %d world ranks=%d sizes=%zu first=%zu last=%zu cut=%d\n", ctx.rank, all.ranks,
              all.samples.size(), all.samples.front().bytes, all.samples.back().bytes,
              all.cut_short ? 1 : 0);
  const int last = ctx.world_size - 1;
  if (ctx.rank == 0 || ctx.rank == last) {
    auto pair = group->subgroup({0, last}, "ends");
    const auto two = ddp::measure_allreduce(*pair, options);
    const double sum = pair->sum({1.0}).front();
    std::printf("rank %d pair ranks=%d sum=%.0f busbw=%s\n", ctx.rank, two.ranks, sum,
                two.peak().busbw_gbps > 0 ? "positive" : "zero");
    pair->shutdown();
  }
  const double mean_rank = group->mean(static_cast<double>(ctx.rank));
  std::printf("rank %d after mean %.2f\n", ctx.rank, mean_rank);
  group->shutdown();
  return 0;
}

void own_sigpipe_handler(int) {}

// SIGPIPE after the meeting: rank 0 leaves it as it was (the default), rank 1 installs a handler
// of its own first. Then a write to a socket whose reader is gone: with SIGPIPE at its default
// this process would die of it (as rank 0, serving the store, did when a rank was killed).
int pipes(const ddp::Context& ctx) {
  using namespace std::chrono_literals;
  if (ctx.rank == 1) std::signal(SIGPIPE, own_sigpipe_handler);
  auto rdv = ddp::Rendezvous::meet(ctx, 4s);
  rdv->finish(4s);
  struct sigaction now {};
  sigaction(SIGPIPE, nullptr, &now);
  const char* disposition = now.sa_handler == SIG_IGN              ? "ignored"
                            : now.sa_handler == own_sigpipe_handler ? "the program's own"
                            : now.sa_handler == SIG_DFL            ? "default"
                                                                   : "other";
  int ends[2];
  socketpair(AF_UNIX, SOCK_STREAM, 0, ends);
  close(ends[1]);
  const ssize_t n = write(ends[0], "x", 1);
  const int error = errno;
  close(ends[0]);
  std::printf("rank %d: SIGPIPE %s; a write to a closed socket: %s\n", ctx.rank, disposition,
              n < 0 ? std::strerror(error) : "written");
  return 0;
}

// Not a rank: another user of the node, who connects to MASTER_ADDR:MASTER_PORT as any TCPStore
// client may and writes `text` under `key` once it can.
int forge(const std::string& key, const std::string& text) {
  c10d::TCPStoreOptions o;
  o.port = static_cast<std::uint16_t>(std::atoi(std::getenv("MASTER_PORT")));
  o.isServer = false;
  o.waitWorkers = false;
  o.timeout = std::chrono::seconds(10);
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 2)
  o.useLibUV = false;  // a client; and Debian's LibTorch 2.x is built without libuv
#endif
  c10d::TCPStore store(std::getenv("MASTER_ADDR"), o);
  store.set(key, std::vector<std::uint8_t>(text.begin(), text.end()));
  std::printf("forged %s\n", key.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string scenario = argc > 1 ? argv[1] : "";
  if (scenario == "forge" && argc > 3) return forge(argv[2], argv[3]);
  try {
    const auto ctx = ddp::Context::from_environment();
    if (scenario == "grads")
      return grads(ctx, std::strtoul(argv[2], nullptr, 10), std::string(argv[3]) == "1");
    if (scenario == "meet") return meet(ctx);
    if (scenario == "descriptors") return descriptors(ctx);
    if (scenario == "exchange") return exchange(ctx, argc > 2 ? std::atoi(argv[2]) : -1);
    if (scenario == "bench") return bench(ctx);
    if (scenario == "linger") return end_apart(ctx);
    if (scenario == "pipes") return pipes(ctx);
    if (scenario == "suspended" && argc > 2) return suspended(ctx, std::atoi(argv[2]));
    if (scenario == "lose" && argc > 3) return lose(ctx, argv[2], std::atoi(argv[3]));
    std::fprintf(stderr,
                 "usage: ddp_test_worker grads BUCKET_BYTES OVERLAP | meet | descriptors | exchange [ABSENT_RANK] | bench | linger | pipes | suspended SECONDS | lose kill|stop|leave RANK | forge KEY TEXT\n");
    return 2;
  } catch (const ddp::Error& e) {
    std::fprintf(stderr, "ddp error: %s\n", e.what());
    return 3;
  }
}
