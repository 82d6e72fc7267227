// One rank of the gradient-synchronisation benchmark (bench/grad_overlap.sh starts the ranks).
// Two identical models train side by side on the same data: one averages gradients through
// buckets overlapped with backward, the other all-reduces every bucket after backward. Steps
// alternate between them, so drift on the machine hits both alike. Rank 0 prints medians and
// ratios.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <torch/torch.h>

#include "ddp/context.hpp"
#include "ddp/grad_sync.hpp"
#include "ddp/process_group.hpp"

namespace {

torch::nn::Sequential make_model(int width, int depth) {
  torch::nn::Sequential m;
  m->push_back(torch::nn::Linear(256, width));
  for (int i = 0; i < depth; ++i) {
    m->push_back(torch::nn::ReLU());
    m->push_back(torch::nn::Linear(width, width));
  }
  m->push_back(torch::nn::ReLU());
  m->push_back(torch::nn::Linear(width, 10));
  return m;
}

std::size_t parameter_count(const torch::nn::Sequential& m) {
  std::size_t n = 0;
  for (const auto& p : m->parameters()) n += static_cast<std::size_t>(p.numel());
  return n;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 30;
  const int width = argc > 2 ? std::atoi(argv[2]) : 1024;
  const int depth = argc > 3 ? std::atoi(argv[3]) : 6;
  const std::size_t bucket = argc > 4 ? std::strtoul(argv[4], nullptr, 10) : (4u << 20);
  const auto ctx = ddp::Context::from_environment();
  auto group = ddp::ProcessGroup::create(ctx);
  torch::manual_seed(0);
  auto overlapped = make_model(width, depth), after = make_model(width, depth);
  ddp::GradientSynchronizer sync_overlapped(overlapped->parameters(), group, {bucket, true});
  ddp::GradientSynchronizer sync_after(after->parameters(), group, {bucket, false});
  sync_overlapped.broadcast_from_main(overlapped->parameters());
  sync_after.broadcast_from_main(after->parameters());

  const auto x = torch::randn({64, 256});
  const auto y = torch::randint(0, 10, {64});
  std::vector<double> t_over, t_after, w_over, w_after;
  auto step = [&](torch::nn::Sequential& m, ddp::GradientSynchronizer& s, std::vector<double>& t,
                  std::vector<double>& w, bool record) {
    group->barrier();  // both variants start from the same point on every rank
    const auto start = std::chrono::steady_clock::now();
    m->zero_grad();
    torch::nn::functional::cross_entropy(m->forward(x), y).backward();
    s.finish();
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (record) {
      t.push_back(secs);
      w.push_back(s.stats().wait_seconds);
    }
  };
  for (int i = 0; i < steps + 3; ++i) {
    const bool record = i >= 3;  // warm-up: first steps pay for allocations and connections
    step(overlapped, sync_overlapped, t_over, w_over, record);
    step(after, sync_after, t_after, w_after, record);
  }
  if (ctx.is_main()) {
    const double to = median(t_over), ta = median(t_after);
    std::printf("gradient sync, %d ranks (%s), %zu-parameter MLP, %zu buckets of <= %zu bytes, "
                "median of %d steps each\n",
                ctx.world_size, group->backend_name().c_str(),
                parameter_count(overlapped),
                sync_overlapped.stats().buckets, bucket, steps);
    std::printf("  all-reduce after backward  step %8.2f ms   waiting on communication %5.1f%%\n",
                ta * 1e3, 100 * median(w_after) / ta);
    std::printf("  overlapped buckets         step %8.2f ms   waiting on communication %5.1f%%\n",
                to * 1e3, 100 * median(w_over) / to);
    std::printf("  step time ratio overlapped / after-backward: %.3f (below 1 = overlap helps)\n",
                to / ta);
  }
  group->shutdown();
  return 0;
}
