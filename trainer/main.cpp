// ddp-cifar100: the reference CIFAR-100 WideResNet recipe as one C++ program, started one task per
// GPU (or CPU rank) by plain srun with spank_ddp, by torchrun, or by srun alone.
#include <arpa/inet.h>
#include <malloc.h>
#include <netdb.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include <torch/torch.h>

#include "data/cifar_format.hpp"
#include "data/download.hpp"
#include "ddp/context.hpp"
#include "ddp/error.hpp"
#include "ddp/log.hpp"
#include "ddp/process_group.hpp"
#include "options.hpp"
#include "rank0_work.hpp"
#include "train.hpp"

namespace {

namespace tr = ddp::trainer;

std::string resolve(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  addrinfo* res = nullptr;
  if (getaddrinfo(host.c_str(), nullptr, &hints, &res) != 0 || !res) return "unresolved";
  char buf[INET_ADDRSTRLEN] = {};
  inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(res->ai_addr)->sin_addr, buf, sizeof buf);
  freeaddrinfo(res);
  return buf;
}

ddp::cifar::Dataset limit(ddp::cifar::Dataset d, int64_t max) {
  if (max > 0 && max < d.size()) {
    d.images = d.images.narrow(0, 0, max);
    d.labels = d.labels.narrow(0, 0, max);
  }
  return d;
}

// With --download, rank 0 fetches (once, into a data directory every node sees) while the others
// wait on the rendezvous as long as it makes progress: a slow download is no failed barrier.
void fetch_data(const tr::TrainOptions& o, ddp::Rendezvous& rendezvous) {
  if (!o.download) return;
  ddp::cifar::DownloadSource source;
  if (!o.download_url.empty()) source.url = o.download_url;
  if (!o.download_md5.empty()) source.md5 = o.download_md5;
  tr::rank0_works_others_wait(rendezvous, "the download of CIFAR-100 into " + o.data_dir,
                              [&](const tr::Tell& tell) {
                                ddp::cifar::download_cifar100(o.data_dir, source, tell);
                              });
}

tr::DeviceData load_data(const tr::TrainOptions& o, ddp::ProcessGroup& group) {
  const auto train = limit(ddp::cifar::load_cifar100(o.data_dir, true), o.max_train_samples);
  const auto test = limit(ddp::cifar::load_cifar100(o.data_dir, false), o.max_test_samples);
  const auto d = group.device();
  return {train.images.to(d), train.labels.to(d), test.images.to(d), test.labels.to(d)};
}

// Every activation of a CPU step is larger than glibc's mmap threshold (128 KiB, raised
// dynamically only up to 32 MiB), so each step mapped its buffers afresh and page-faulted them in
// again: ~6% of a CPU step in the kernel, and 1.07x step time measured at width 0.1. Freed
// buffers now stay in the heap for the next step. Harmless on GPU, where host allocations are few.
void keep_freed_buffers() {
  mallopt(M_MMAP_THRESHOLD, 256 << 20);
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
}

void set_threads(const tr::TrainOptions& o) {
  int threads = o.threads;
  if (threads == 0)
    if (const char* omp = std::getenv("OMP_NUM_THREADS")) threads = std::atoi(omp);
  if (threads > 0) torch::set_num_threads(threads);
}

}  // namespace

int main(int argc, char** argv) {
  keep_freed_buffers();
  const tr::TrainOptions options = tr::parse_options(argc, argv);
  std::optional<ddp::Context> ctx;
  try {
    ctx = ddp::Context::from_environment();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ddp-cifar100: %s\n", e.what());
    return 2;
  }
  const ddp::Logger log(*ctx);
  try {
    set_threads(options);
    const auto rendezvous = ddp::ProcessGroup::meet(*ctx);
    fetch_data(options, *rendezvous);
    auto group = ddp::ProcessGroup::create(rendezvous);
    if (ctx->is_main()) {
      std::printf("Head node: %s (%s), rendezvous port %u, backend %s\n",
                  ctx->master_addr.c_str(), resolve(ctx->master_addr).c_str(),
                  static_cast<unsigned>(ctx->master_port), group->backend_name().c_str());
      std::printf("Training started with %d processes across %d nodes.\n", ctx->world_size,
                  ctx->nodes);
      if (group->device().is_cuda())
        std::printf("Using %d GPUs per node.\n", ctx->local_world_size);
      else
        std::printf("Using %d CPU processes per node (no GPU: %s).\n", ctx->local_world_size,
                    group->backend_name().c_str());
      std::fflush(stdout);
    }
    const tr::DeviceData data = load_data(options, *group);
    const int status = tr::train(options, group, data, log);
    group->shutdown();
    return status;
  } catch (const std::exception& e) {
    log.error(std::string("ddp-cifar100: ") + e.what());
    return 1;
  }
}
