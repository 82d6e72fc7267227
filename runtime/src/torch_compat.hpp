// The LibTorch calls libddp makes whose spelling differs between the versions it builds against
// (Debian's 1.13 and current 2.x). Branch on TORCH_VERSION_MAJOR here and nowhere else.
#pragma once

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/Generator.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/randperm.h>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <torch/version.h>
#ifdef USE_C10D_NCCL
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#if TORCH_VERSION_MAJOR < 1 || (TORCH_VERSION_MAJOR == 1 && TORCH_VERSION_MINOR < 13)
#error "libddp needs LibTorch 1.13 or newer"
#endif

namespace ddp::detail {

// The generator `torch.Generator().manual_seed(seed)` makes in Python: a CPU mt19937 seeded with
// `seed` (1.13 and 2.x alike keep only its low 32 bits).
inline at::Generator seeded_cpu_generator(std::uint64_t seed) {
  return at::make_generator<at::CPUGeneratorImpl>(seed);
}

// Python's `torch.randperm(n, generator=torch.Generator().manual_seed(seed)).tolist()`. The ATen
// op is the one torch::randperm wraps for autograd, which an index list does not need.
// randperm's optional generator is c10::optional in 1.13 and std::optional in 2.x; an
// at::Generator converts to either.
inline std::vector<std::int64_t> randperm(std::int64_t n, std::uint64_t seed) {
  const at::Tensor perm = at::randperm(n, seeded_cpu_generator(seed), at::kLong);
  const std::int64_t* data = perm.data_ptr<std::int64_t>();
  return std::vector<std::int64_t>(data, data + n);
}

}  // namespace ddp::detail

namespace ddp::compat {

// 2.x split c10d::ProcessGroup into a dispatcher over c10d::Backend implementations; both
// versions still let us hold one concrete backend (Gloo or NCCL) and call it directly.
#if TORCH_VERSION_MAJOR >= 2
using Backend = c10d::Backend;
#else
using Backend = c10d::ProcessGroup;
#endif

using Work = c10d::Work;

// LibTorch 2.4 and later serve the TCPStore with libuv by default, but distributions build it
// without libuv too (Debian 13's 2.6 is), and then rank 0's store refuses to start. USE_LIBUV=0
// chooses the classic server, as it does for PyTorch; otherwise a build without libuv falls back to
// the classic server instead of failing the job.
inline c10::intrusive_ptr<c10d::TCPStore> make_tcp_store(const std::string& host,
                                                         c10d::TCPStoreOptions options) {
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 2)
  const char* use_libuv = std::getenv("USE_LIBUV");
  if (use_libuv != nullptr && std::string_view(use_libuv) == "0") options.useLibUV = false;
  if (options.useLibUV) {
    try {
      return c10::make_intrusive<c10d::TCPStore>(host, options);
    } catch (const c10::Error& e) {
      if (std::string_view(e.what_without_backtrace()).find("libuv") == std::string_view::npos)
        throw;
      options.useLibUV = false;
    }
  }
#endif
  return c10::make_intrusive<c10d::TCPStore>(host, options);
}

// The connections a TCPStore client opens to the server: 1.13's clients open a second one for
// watchKey's callbacks (TCPCallbackClient), which 2.x dropped with watchKey; 2.1 is taken as the
// first release without it (not checked against every 2.0 build).
#if TORCH_VERSION_MAJOR < 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR < 1)
inline constexpr int kStoreConnectionsPerClient = 2;
#else
inline constexpr int kStoreConnectionsPerClient = 1;
#endif

// NCCL's communicators are ended by hand since PyTorch 2.4 (destroy_process_group() calls these
// in Python): a ProcessGroupNCCL destroyed without shutdown() or abort() warns "destroy_process_group()
// was not called before program exit" and ends them itself. Gloo keeps no such state; 1.13-2.3
// end NCCL in the destructor, silently.
#if defined(USE_C10D_NCCL) && (TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4))
#define DDP_NCCL_ENDS_BY_HAND 1
inline c10d::ProcessGroupNCCL* as_nccl(const c10::intrusive_ptr<Backend>& backend) {
  return dynamic_cast<c10d::ProcessGroupNCCL*>(backend.get());
}
#endif

// Every rank reached the end: the communicators are destroyed in order.
inline void shutdown_backend(const c10::intrusive_ptr<Backend>& backend) {
#ifdef DDP_NCCL_ENDS_BY_HAND
  if (auto* nccl = as_nccl(backend)) nccl->shutdown();
#else
  (void)backend;
#endif
}

// This rank ends early (an error, a lost peer): the communicators are aborted without waiting for
// the other ranks, which an orderly destroy would do, forever if one of them is gone.
inline void abort_backend(const c10::intrusive_ptr<Backend>& backend) {
#ifdef DDP_NCCL_ENDS_BY_HAND
  if (auto* nccl = as_nccl(backend)) nccl->abort();
#else
  (void)backend;
#endif
}

// LibTorch 2.8 and later ask a store for a copy a second thread may use (Store::clone(), pytorch
// #150966); earlier releases never do, and have no clone() to call (2.6 has none).
inline c10::intrusive_ptr<c10d::Store> clone_store(c10d::Store& store) {
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 8)
  return store.clone();
#else
  (void)store;
  throw std::logic_error("Store::clone: LibTorch before 2.8 has none");
#endif
}

// LibTorch's errors carry a C++ backtrace in what(); users need the message only, without the
// final full stop and newline (our messages go on after it).
inline std::string message_of(const std::exception& e) {
  const auto* c10 = dynamic_cast<const c10::Error*>(&e);
  std::string m = c10 ? c10->what_without_backtrace() : e.what();
  while (!m.empty() && (m.back() == '.' || m.back() == '\n' || m.back() == ' ')) m.pop_back();
  return m;
}

}  // namespace ddp::compat
