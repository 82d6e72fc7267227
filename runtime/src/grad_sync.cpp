#include "ddp/grad_sync.hpp"

#include <mutex>
#include <utility>

#include <torch/csrc/autograd/utils/lambda_post_hook.h>
#include <torch/csrc/autograd/variable.h>

#include "ddp/error.hpp"

namespace ddp {

// What grad_accumulator() hands out: a std::shared_ptr<Node> up to LibTorch 2.6, a
// c10::intrusive_ptr<Node> in 2.14. Held only to keep the hooks alive, so either will do.
using AccumulatorHandle =
    decltype(torch::autograd::impl::grad_accumulator(std::declval<const torch::Tensor&>()));

struct Bucket {
  std::vector<std::size_t> params;  // indices into State::params
  torch::Tensor flat;
  // Each parameter's place in `flat`, with the parameter's own strides (a channels_last weight
  // keeps its layout, so that its gradient can live there). Made once: flat never moves.
  std::vector<torch::Tensor> slots;
  // The same memory as tensors autograd does not know as views, to hand out as gradients:
  // optimizers may detach_() their gradients (LibTorch 1.13's zero_grad does), which a view refuses.
  std::vector<torch::Tensor> grads;
  std::size_t pending = 0;  // parameters whose gradient has not arrived this step
  Pending work;
};

struct GradientSynchronizer::State {
  std::vector<torch::Tensor> params;
  std::vector<std::size_t> bucket_of;  // param index -> bucket index
  std::vector<std::size_t> slot_of;    // param index -> its position in that bucket
  std::vector<bool> ready;             // param index -> gradient copied this step
  std::vector<Bucket> buckets;
  std::size_t next_launch = 0;
  std::size_t copied = 0;  // this step
  std::shared_ptr<ProcessGroup> group;
  GradSyncOptions options;
  GradSyncStats stats;
  std::vector<AccumulatorHandle> accumulators;  // keep the hooks alive
  std::mutex mutex;

  static bool same_memory(const torch::Tensor& a, const torch::Tensor& b) {
    return a.defined() && a.data_ptr() == b.data_ptr() && a.strides() == b.strides();
  }

  void copy_in(std::size_t p) {
    Bucket& b = buckets[bucket_of[p]];
    const auto& grad = params[p].grad();
    const auto& place = b.slots[slot_of[p]];
    // After the first step the gradient is its bucket slot's memory (see finish()): backward
    // accumulated straight into the bucket, nothing to copy.
    if (!same_memory(grad, place)) {
      if (grad.defined())
        place.copy_(grad);
      else
        place.zero_();
      ++copied;
    }
    ready[p] = true;
    --b.pending;
  }

  // Start every full bucket whose predecessors have started: the same order on every rank.
  void launch_ready() {
    while (next_launch < buckets.size() && buckets[next_launch].pending == 0) {
      Bucket& b = buckets[next_launch++];
      // One rank: the sum over ranks is the bucket itself, and no collective (nor its host-side
      // bookkeeping, which a CUDA graph capture refuses) is needed.
      if (group->context().world_size > 1) b.work = group->allreduce_sum(b.flat, "gradients");
    }
  }

  void on_gradient(std::size_t p) {
    std::lock_guard<std::mutex> lock(mutex);
    if (ready[p]) return;  // a second backward through the same graph before finish()
    copy_in(p);
    launch_ready();
  }
};

namespace {

void assign_buckets(GradientSynchronizer::State& s) {
  const std::size_t n = s.params.size();
  s.bucket_of.assign(n, 0);
  s.slot_of.assign(n, 0);
  Bucket current;
  std::size_t bytes = 0;
  auto close = [&] {
    if (current.params.empty()) return;
    const auto& first = s.params[current.params.front()];
    std::int64_t numel = 0;
    std::vector<std::int64_t> offsets;
    for (std::size_t i = 0; i < current.params.size(); ++i) {
      offsets.push_back(numel);
      numel += s.params[current.params[i]].numel();
      s.bucket_of[current.params[i]] = s.buckets.size();
      s.slot_of[current.params[i]] = i;
    }
    current.flat = torch::zeros({numel}, first.options());
    for (std::size_t i = 0; i < current.params.size(); ++i) {
      const auto& p = s.params[current.params[i]];
      const auto slot = p.is_non_overlapping_and_dense()
                            ? current.flat.as_strided(p.sizes(), p.strides(), offsets[i])
                            : current.flat.narrow(0, offsets[i], p.numel()).view_as(p);
      current.slots.push_back(slot);
      current.grads.push_back(torch::empty({0}, slot.options())
                                  .set_(slot.storage(), slot.storage_offset(), slot.sizes(),
                                        slot.strides()));
    }
    s.buckets.push_back(std::move(current));
    current = Bucket();
    bytes = 0;
  };
  for (std::size_t k = n; k-- > 0;) {
    const auto& p = s.params[k];
    // A bucket holds one dtype on one device: it is reduced as one flat tensor.
    if (!current.params.empty()) {
      const auto& first = s.params[current.params.front()];
      if (first.scalar_type() != p.scalar_type() || first.device() != p.device()) close();
    }
    current.params.push_back(k);
    bytes += static_cast<std::size_t>(p.numel()) * p.element_size();
    if (bytes >= s.options.bucket_bytes) close();
  }
  close();
}

void reset_step(GradientSynchronizer::State& s) {
  s.ready.assign(s.params.size(), false);
  for (auto& b : s.buckets) b.pending = b.params.size();
  s.next_launch = 0;
  s.copied = 0;
}

}  // namespace

GradientSynchronizer::GradientSynchronizer(std::vector<torch::Tensor> parameters,
                                           std::shared_ptr<ProcessGroup> group,
                                           GradSyncOptions options)
    : state_(std::make_shared<State>()) {
  State& s = *state_;
  s.group = std::move(group);
  s.options = options;
  for (auto& p : parameters)
    if (p.requires_grad()) s.params.push_back(p);
  if (s.params.empty()) throw Error("GradientSynchronizer: no parameter requires a gradient");
  for (const auto& p : s.params)
    if (p.device() != s.group->device())
      throw Error("GradientSynchronizer: a parameter lives on " + p.device().str() +
                  " but the process group reduces on " + s.group->device().str() +
                  "; move the model there first");
  assign_buckets(s);
  reset_step(s);
  s.stats.buckets = s.buckets.size();
  if (!options.overlap) return;
  std::weak_ptr<State> weak = state_;
  for (std::size_t i = 0; i < s.params.size(); ++i) {
    auto acc = torch::autograd::impl::grad_accumulator(s.params[i]);
    // The hook runs after the accumulator has written .grad(). It holds the state weakly: a
    // model that outlives its synchronizer keeps working, unsynchronized.
    acc->add_post_hook(std::make_unique<torch::autograd::utils::LambdaPostHook>(
        [weak, i](const torch::autograd::variable_list& outputs,
                  const torch::autograd::variable_list&) {
          if (auto state = weak.lock()) state->on_gradient(i);
          return outputs;
        }));
    s.accumulators.push_back(std::move(acc));
  }
}

GradientSynchronizer::~GradientSynchronizer() = default;

void GradientSynchronizer::broadcast_from_main(std::vector<torch::Tensor> tensors) {
  torch::NoGradGuard no_grad;
  state_->group->broadcast(tensors, 0);
}

void GradientSynchronizer::finish() {
  State& s = *state_;
  std::lock_guard<std::mutex> lock(s.mutex);
  torch::NoGradGuard no_grad;
  // Gradients that never arrived (parameters unused this step, or overlap off) go in now.
  for (std::size_t p = 0; p < s.params.size(); ++p)
    if (!s.ready[p]) s.copy_in(p);
  s.launch_ready();
  const auto start = std::chrono::steady_clock::now();
  for (auto& b : s.buckets) b.work.wait();
  s.stats.wait_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  s.stats.copied = s.copied;
  const double scale = 1.0 / s.group->context().world_size;
  for (auto& b : s.buckets) {
    if (scale != 1.0) b.flat.mul_(scale);
    // Each gradient becomes (or stays) a view of its slot, as PyTorch DDP's
    // gradient_as_bucket_view: the next backward accumulates into the bucket in place (an
    // optimizer that zeroes gradients in place keeps the view; one that drops them costs a copy
    // next step), and neither the copy in nor the copy back happens again.
    for (std::size_t i = 0; i < b.params.size(); ++i) {
      auto& param = s.params[b.params[i]];
      if (!State::same_memory(param.grad(), b.slots[i])) param.mutable_grad() = b.grads[i];
    }
  }
  reset_step(s);
}

GradSyncStats GradientSynchronizer::stats() const { return state_->stats; }

}  // namespace ddp
