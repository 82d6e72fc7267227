#include "ddp/process_group.hpp"

#include <cstdlib>
#include <iostream>
#include <map>
#include <set>

#include <torch/csrc/distributed/c10d/PrefixStore.hpp>

#include "torch_compat.hpp"
#include "ddp/env_contract.hpp"
#include "ddp/error.hpp"
#include "peer_watch.hpp"
#include "rendezvous.hpp"
#ifdef USE_C10D_NCCL
#include <c10/cuda/CUDAFunctions.h>
#endif

namespace ddp {

struct ProcessGroup::Native {
  // First, so destroyed last: it keeps watching while the backend shuts down (which can hang on
  // a lost peer).
  std::shared_ptr<detail::PeerWatch> watch;
  // On a node's leader under DDP_STORE_RELAY: its node's ranks reach `store` through it, so it
  // stays as long as the store (a subgroup's too).
  std::shared_ptr<detail::StoreRelay> relay;
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<compat::Backend> backend;
  // spank_ddp's failure watch runs on the nodes (DDP_WATCH): it judges lost and frozen ranks.
  bool launcher_watches = false;
};

struct Pending::Impl {
  c10::intrusive_ptr<compat::Work> work;
  std::string what;
  std::chrono::milliseconds timeout;
  std::shared_ptr<detail::PeerWatch> watch;
  bool launcher_watches = false;
};

namespace {

// The error for a failed collective: which ranks were lost when the watch can tell, else the
// backend's words and the likely causes; under spank_ddp's failure watch, where its one verdict
// names the rank that failed first.
Error collective_failed(const std::string& what, const std::exception& e,
                        const std::shared_ptr<detail::PeerWatch>& watch, bool launcher_watches) {
  const std::string backend = compat::message_of(e);
  if (watch)
    if (auto lost = watch->explain()) return Error(what + " failed: " + *lost + " [" + backend + "]");
  return Error(what + " failed: " + backend +
               (launcher_watches
                    ? " (another rank ended or was lost: spank_ddp's 'step ... failed:' line names "
                      "the first)"
                    : " (a rank probably died, or the network between ranks broke)"));
}

}  // namespace

Pending::Pending() = default;
Pending::Pending(Pending&&) noexcept = default;
Pending& Pending::operator=(Pending&&) noexcept = default;
Pending::~Pending() = default;
bool Pending::valid() const { return impl_ != nullptr; }

void Pending::wait() {
  if (!impl_) return;
  try {
    impl_->work->wait(impl_->timeout);
  } catch (const std::exception& e) {
    throw collective_failed(impl_->what, e, impl_->watch, impl_->launcher_watches);
  }
  impl_.reset();
}

namespace {

namespace c = ddp::contract;

std::chrono::milliseconds env_seconds(const EnvLookup& env, const char* name,
                                      std::chrono::milliseconds fallback, bool zero_allowed = false) {
  const std::optional<std::string> text = env(name);
  if (!text || text->empty()) return fallback;
  const char* v = text->c_str();
  char* end = nullptr;
  const double s = std::strtod(v, &end);
  if (*end != '\0' || !(s > 0 || (zero_allowed && s == 0)) || s > 7 * 24 * 3600)
    throw Error(std::string(name) + "='" + *text + "' is not a time-out; give seconds, e.g. 300" +
                (zero_allowed ? " (0: off)" : ""));
  return std::chrono::milliseconds(static_cast<long long>(s * 1000));
}

bool cuda_usable() {
#ifdef USE_C10D_NCCL
  return torch::cuda::is_available();
#else
  return false;
#endif
}

// The backend: asked for explicitly > the launcher's decision > what the machine can do. The
// launcher's "nccl" on a node without usable CUDA (a CPU build of LibTorch) becomes Gloo with a
// warning; an explicit request that cannot work is an error.
c::Backend choose_backend(const Context& c, const ProcessGroupOptions& o, bool warn = true) {
  if (o.backend) {
    if (*o.backend == c::Backend::Nccl && !cuda_usable())
      throw Error("backend nccl needs CUDA, and this program's LibTorch has no usable CUDA/NCCL; "
                  "use gloo, or build against a CUDA LibTorch");
    return *o.backend;
  }
  if (c.backend == c::Backend::Nccl && !cuda_usable()) {
    if (c.is_main() && warn)
      std::cerr << "[ddp] warning: the launcher chose nccl (DDP_BACKEND), but this program has "
                   "no usable CUDA; using gloo\n";
    return c::Backend::Gloo;
  }
  if (c.backend) return *c.backend;
  return cuda_usable() ? c::Backend::Nccl : c::Backend::Gloo;
}

c10::intrusive_ptr<compat::Backend> make_gloo(const Context& c,
                                              const c10::intrusive_ptr<c10d::Store>& store,
                                              std::chrono::milliseconds timeout) {
  auto options = c10d::ProcessGroupGloo::Options::create(timeout);
  try {
    options->devices.push_back(
        c.gloo_ifname ? c10d::ProcessGroupGloo::createDeviceForInterface(*c.gloo_ifname)
                      : c10d::ProcessGroupGloo::createDefaultDevice());
  } catch (const std::exception& e) {
    const std::string name = c::kGlooSocketIfname;
    throw Error("cannot open the Gloo network device" +
                (c.gloo_ifname ? " on " + name + "=" + *c.gloo_ifname : std::string()) + ": " +
                compat::message_of(e) + ". Fix: set " + name +
                " to an interface of this node that is up (see `ip addr`)");
  }
  return c10::make_intrusive<c10d::ProcessGroupGloo>(store, c.rank, c.world_size, options);
}

#ifdef USE_C10D_NCCL
c10::intrusive_ptr<compat::Backend> make_nccl(const Context& c,
                                              const c10::intrusive_ptr<c10d::Store>& store,
                                              std::chrono::milliseconds timeout) {
  c10::cuda::set_device(static_cast<c10::DeviceIndex>(c.local_rank));
  auto options = c10d::ProcessGroupNCCL::Options::create();
  options->timeout = timeout;
  return c10::make_intrusive<c10d::ProcessGroupNCCL>(store, c.rank, c.world_size, options);
}
#endif

// The heartbeat between ranks (peer_watch.hpp): DDP_PEER_TIMEOUT, else off where spank_ddp's
// failure watch runs (DDP_WATCH), which finds frozen ranks and lost nodes for any program and says
// so once; two watches would each say it. Else the default.
std::chrono::milliseconds peer_timeout(const EnvLookup& env, std::chrono::milliseconds fallback) {
  if (env(c::kDdpWatch) && !env(c::kDdpPeerTimeout)) return std::chrono::milliseconds(0);
  return env_seconds(env, c::kDdpPeerTimeout, fallback, true);
}

void check_device(const Context& c, c::Backend chosen) {
  if (chosen == c::Backend::Nccl && c.local_rank >= static_cast<int>(torch::cuda::device_count()))
    throw Error("LOCAL_RANK=" + std::to_string(c.local_rank) + " but this task sees " +
                std::to_string(torch::cuda::device_count()) +
                " CUDA device(s); give each node one task per GPU (--ddp-gpus)");
}

}  // namespace

std::shared_ptr<Rendezvous> ProcessGroup::meet(const Context& c, ProcessGroupOptions o) {
  const EnvLookup env = o.env ? o.env : process_environment();
  o.rendezvous_timeout = env_seconds(env, c::kDdpRendezvousTimeout, o.rendezvous_timeout);
  // Every check that needs no other rank comes first: failing one needs no rendezvous.
  o.timeout = env_seconds(env, c::kDdpTimeout, o.timeout);
  o.peer_timeout = peer_timeout(env, o.peer_timeout);
  check_device(c, choose_backend(c, o, /*warn=*/false));
  return Rendezvous::meet(c, o.rendezvous_timeout);
}

std::shared_ptr<ProcessGroup> ProcessGroup::create(const Context& c, ProcessGroupOptions o) {
  const auto rendezvous = meet(c, o);
  return create(rendezvous, o);
}

std::shared_ptr<ProcessGroup> ProcessGroup::create(const std::shared_ptr<Rendezvous>& rendezvous,
                                                   ProcessGroupOptions o) {
  if (!rendezvous) throw Error("ProcessGroup::create: no rendezvous");
  const Context& c = rendezvous->context();
  const EnvLookup env = o.env ? o.env : process_environment();
  o.timeout = env_seconds(env, c::kDdpTimeout, o.timeout);
  o.peer_timeout = peer_timeout(env, o.peer_timeout);
  const c::Backend chosen = choose_backend(c, o);
  const std::string backend = c::backend_name(chosen);
  check_device(c, chosen);

  const bool watched = c.world_size > 1 && o.peer_timeout.count() > 0;
  auto native = std::make_unique<Native>();
  native->store = rendezvous->native_->store;
  native->relay = rendezvous->native_->relay;
  native->launcher_watches = env(c::kDdpWatch).has_value();
  try {
#ifdef USE_C10D_NCCL
    if (chosen == c::Backend::Nccl) native->backend = make_nccl(c, native->store, o.timeout);
#endif
    if (!native->backend) native->backend = make_gloo(c, native->store, o.timeout);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Error("cannot build the " + backend + " process group: " + compat::message_of(e));
  }
  if (watched) {
    detail::PeerWatchOptions watch;
    watch.peer_timeout = o.peer_timeout;
    watch.connect_timeout = o.timeout;  // as long as the backend's own set-up may take
    native->watch = std::make_shared<detail::PeerWatch>(*rendezvous, watch);
  }
  const torch::Device device = chosen == c::Backend::Nccl
                                   ? torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(c.local_rank))
                                   : torch::Device(torch::kCPU);
  return std::shared_ptr<ProcessGroup>(
      new ProcessGroup(c, backend, device, std::move(native), o.timeout));
}

ProcessGroup::ProcessGroup(const Context& context, std::string backend, torch::Device device,
                           std::unique_ptr<Native> native, std::chrono::milliseconds timeout)
    : context_(context),
      backend_name_(std::move(backend)),
      device_(device),
      native_(std::move(native)),
      timeout_(timeout) {}

ProcessGroup::~ProcessGroup() {
  if (!native_) return;
  // Ending without shutdown(): say so before the backend's connections close and the other
  // ranks' collectives fail, so that they name this rank as the cause.
  if (native_->watch) native_->watch->leave();
  // An error or a lost peer brought us here: waiting for the others could be forever.
  try {
    compat::abort_backend(native_->backend);
  } catch (const std::exception& e) {
    std::cerr << "[ddp] warning: aborting the " << backend_name_
              << " process group failed: " << compat::message_of(e) << "\n";
  }
}

Pending ProcessGroup::allreduce_sum(torch::Tensor& tensor, const char* what) {
  if (!native_) throw Error(std::string(what) + ": the process group was shut down");
  std::vector<at::Tensor> tensors{tensor};
  Pending p;
  p.impl_ = std::make_unique<Pending::Impl>();
  p.impl_->what = std::string("all-reduce of ") + what;
  p.impl_->timeout = timeout_;
  p.impl_->watch = native_->watch;
  p.impl_->launcher_watches = native_->launcher_watches;
  try {
    p.impl_->work = native_->backend->allreduce(tensors, c10d::AllreduceOptions());
  } catch (const std::exception& e) {
    throw Error(p.impl_->what + " could not start: " + compat::message_of(e));
  }
  return p;
}

void ProcessGroup::broadcast(std::vector<torch::Tensor>& tensors, int root) {
  if (!native_) throw Error("broadcast: the process group was shut down");
  // c10d reads a list as one tensor per device; send each dtype's tensors as one flat buffer.
  std::map<c10::ScalarType, std::vector<torch::Tensor>> by_type;
  for (auto& t : tensors) by_type[t.scalar_type()].push_back(t);
  c10d::BroadcastOptions options;
  options.rootRank = root;
  for (auto& [type, group] : by_type) {
    std::vector<torch::Tensor> flat_parts;
    for (auto& t : group) flat_parts.push_back(t.detach().reshape({-1}).to(device_));
    std::vector<at::Tensor> flat{torch::cat(flat_parts)};
    try {
      native_->backend->broadcast(flat, options)->wait(timeout_);
    } catch (const std::exception& e) {
      throw collective_failed("broadcast from rank " + std::to_string(root), e, native_->watch,
                              native_->launcher_watches);
    }
    std::int64_t offset = 0;
    for (auto& t : group) {
      torch::NoGradGuard no_grad;
      t.copy_(flat[0].narrow(0, offset, t.numel()).view_as(t));
      offset += t.numel();
    }
  }
}

void ProcessGroup::barrier() {
  if (!native_) throw Error("barrier: the process group was shut down");
  try {
    native_->backend->barrier(c10d::BarrierOptions())->wait(timeout_);
  } catch (const std::exception& e) {
    throw collective_failed("barrier", e, native_->watch, native_->launcher_watches);
  }
}

std::vector<double> ProcessGroup::sum(const std::vector<double>& values) {
  auto t = torch::tensor(values, torch::TensorOptions().dtype(torch::kFloat64)).to(device_);
  allreduce_sum(t, "metrics").wait();
  t = t.cpu();
  return std::vector<double>(t.data_ptr<double>(), t.data_ptr<double>() + t.numel());
}

std::vector<double> ProcessGroup::mean(const std::vector<double>& values) {
  auto out = sum(values);
  for (auto& v : out) v /= context_.world_size;
  return out;
}

void ProcessGroup::shutdown() {
  if (shut_down_) return;
  shut_down_ = true;
  // Done, not lost: the others must not mistake this rank's silence for a failure.
  if (native_->watch) native_->watch->finish();
  // Rank 0 serves the store: it must not leave while others still talk to it. A failure here
  // leaves native_ for the destructor, which aborts instead.
  barrier();
  try {
    compat::shutdown_backend(native_->backend);
  } catch (const std::exception& e) {
    throw Error("shutting down the " + backend_name_ + " process group failed: " +
                compat::message_of(e));
  }
  native_.reset();
}

std::shared_ptr<ProcessGroup> ProcessGroup::subgroup(const std::vector<int>& ranks,
                                                   const std::string& name) {
  const std::string what = "subgroup '" + name + "'";
  if (!native_) throw Error(what + ": the process group was shut down");
  std::set<int> seen;
  int mine = -1;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    const int r = ranks[i];
    if (r < 0 || r >= context_.world_size || !seen.insert(r).second)
      throw Error(what + ": rank " + std::to_string(r) + " is not a rank of the group or is listed twice");
    if (r == context_.rank) mine = static_cast<int>(i);
  }
  if (mine < 0)
    throw Error(what + ": rank " + std::to_string(context_.rank) +
                " is not one of its ranks; only its members create a subgroup");
  Context sub = context_;  // the same node and device; rank and size within the subgroup
  sub.rank = mine;
  sub.world_size = static_cast<int>(ranks.size());
  auto native = std::make_unique<Native>();
  native->relay = native_->relay;
  native->store = c10::make_intrusive<c10d::PrefixStore>("ddp/group/" + name + "/", native_->store);
  try {
#ifdef USE_C10D_NCCL
    if (device_.is_cuda()) native->backend = make_nccl(sub, native->store, timeout_);
#endif
    if (!native->backend) native->backend = make_gloo(sub, native->store, timeout_);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Error("cannot build the " + backend_name_ + " " + what + ": " + compat::message_of(e));
  }
  return std::shared_ptr<ProcessGroup>(
      new ProcessGroup(sub, backend_name_, device_, std::move(native), timeout_));
}

}  // namespace ddp
