#include "train.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>

#include <nlohmann/json.hpp>

#include "augment.hpp"
#include "bn_act_gpu.hpp"
#include "checkpoint.hpp"
#include "ddp/grad_sync.hpp"
#include "ddp/sampler.hpp"
#include "precision.hpp"
#include "progress_log.hpp"
#include "sgd.hpp"
#include "step_graph.hpp"
#include "step_profile.hpp"
#include "stop_signals.hpp"
#include "wide_resnet.hpp"

namespace ddp::trainer {
namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

struct Eval {
  double loss = 0, accuracy = 0;
};

// Each test image is evaluated exactly once, by exactly one rank: contiguous shards.
Eval evaluate(WideResNet& model, const DeviceData& data, const TrainOptions& o,
              ProcessGroup& group) {
  const auto& ctx = group.context();
  const int64_t n = data.test_images.size(0);
  const int64_t begin = n * ctx.rank / ctx.world_size, end = n * (ctx.rank + 1) / ctx.world_size;
  const int64_t chunk = std::max<int64_t>(1, std::min<int64_t>(1000, o.batch_size));
  model->eval();
  torch::NoGradGuard no_grad;
  const auto f = torch::TensorOptions().dtype(torch::kFloat64).device(group.device());
  auto loss_sum = torch::zeros({}, f), correct = torch::zeros({}, f);
  for (int64_t i = begin; i < end; i += chunk) {
    const int64_t len = std::min(chunk, end - i);
    auto x = data.test_images.narrow(0, i, len);
    const auto y = data.test_labels.narrow(0, i, len);
    x = o.augment_test ? augment_and_normalize(x) : normalize(x);
    x = x.contiguous(at::MemoryFormat::ChannelsLast);
    torch::Tensor out;
    {
      AutocastScope autocast(o.precision, group.device());
      out = model->forward(x);
    }
    out = out.to(torch::kFloat);
    loss_sum += torch::nn::functional::cross_entropy(
                    out, y, torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum))
                    .to(torch::kFloat64);
    correct += out.argmax(1).eq(y).sum().to(torch::kFloat64);
  }
  const auto totals = group.sum({loss_sum.item<double>(), correct.item<double>(),
                                 static_cast<double>(end - begin)});
  return {totals[0] / totals[2], totals[1] / totals[2]};
}

void append_metrics(const std::string& path, const nlohmann::json& line) {
  std::ofstream out(path, std::ios::app);
  out << line.dump() << "\n";
}

// A GPU step is a few milliseconds: the ranks agree on a stop every this many steps (one small
// all-reduce, which makes the host wait for the GPU), a CPU step every time.
constexpr int64_t kStopCheckStepsGpu = 16;

// Whether the ranks stop before step `s` (of an epoch), after a signal on any of them.
int stop_before(int64_t s, int64_t check_every, const std::optional<StopSignals>& signals,
                ProcessGroup& group) {
  if (!signals || s % check_every != 0) return 0;
  return agreed_stop(group);
}

}  // namespace

int train(const TrainOptions& o, const std::shared_ptr<ProcessGroup>& group,
          const DeviceData& data, const Logger& log) {
  const auto& ctx = group->context();
  const torch::Device device = group->device();
  const bool cuda = device.is_cuda();
  check_precision_supported(o.precision, device);
  if (o.batch_size < ctx.world_size)
    throw std::invalid_argument("--batch-size " + std::to_string(o.batch_size) +
                                " is smaller than the " + std::to_string(ctx.world_size) +
                                " ranks; the global batch is split over them");
  const int64_t per_rank = o.batch_size / ctx.world_size;

  // On a GPU everything from here runs on a stream of the trainer's own (step_graph.hpp).
  const TrainingStream stream(device);
  torch::manual_seed(o.seed);
  WideResNet model(100, o.width);
  model->set_gpu_fusion(o.gpu_fusion);
  // Training costs about three forward passes: the basis of the achieved TFLOP/s reported below.
  const double train_flops_per_image = 3 * forward_flops_per_image(model);
  // Several ranks: the step is not captured (c10d's NCCL all-reduce refuses graph capture here).
  const bool graph = cuda && o.cuda_graph && cuda_graphs_built() && ctx.world_size == 1;
  if (ctx.is_main()) {
    std::printf("Model: WideResNet width %g, %lld parameters, %.3f GFLOP per trained image\n",
                o.width, static_cast<long long>(parameter_count(*model)),
                train_flops_per_image / 1e9);
    if (cuda)
      std::printf("GPU step: %s, CUDA graph %s, fused batch norm kernels %s\n",
                  precision_name(o.precision), graph ? "on" : "off",
                  o.gpu_fusion && gpu_bn_act_built() ? "on" : "off");
    std::fflush(stdout);
  }
  model->to(device);
  if (cuda) at::globalContext().setBenchmarkCuDNN(true);
  // channels_last (NHWC) suits cuDNN's tensor-core kernels and oneDNN's CPU convolutions alike
  // (measured here: forward+backward 1.15x faster on CPU).
  {
    torch::NoGradGuard no_grad;
    for (auto& p : model->parameters())
      if (p.dim() == 4) p.set_data(p.contiguous(at::MemoryFormat::ChannelsLast));
  }
  auto params = model->parameters();
  GradientSynchronizer sync(params, group);
  std::vector<torch::Tensor> state = params;
  for (auto& b : model->buffers()) state.push_back(b);
  sync.broadcast_from_main(state);
  Sgd optimizer(params, o.base_lr, 0.9, 5e-4);
  LossScaler scaler(o.precision, device);

  Progress progress;
  if (!o.checkpoint_dir.empty())
    if (auto resumed = load_checkpoint(o.checkpoint_dir, model, optimizer, scaler, o)) {
      progress = *resumed;
      log.info("Resuming from " + checkpoint_path(o.checkpoint_dir) +
               (progress.steps_done > 0 ? " in epoch " + std::to_string(progress.epochs_done + 1) +
                                              " at step " + std::to_string(progress.steps_done)
                                        : " after epoch " + std::to_string(progress.epochs_done)));
    }
  // With checkpoints, a time limit or a preemption costs at most a few steps (stop_signals.hpp).
  std::optional<StopSignals> signals;
  if (!o.checkpoint_dir.empty()) signals.emplace();

  DistributedSampler sampler(data.train_images.size(0), ctx.world_size, ctx.rank, true, o.seed);
  int64_t steps = sampler.num_samples() / per_rank;  // the reference's loader drops the last
  if (o.max_steps > 0) steps = std::min(steps, o.max_steps);
  if (steps == 0)
    throw std::invalid_argument("each rank has " + std::to_string(sampler.num_samples()) +
                                " training images, fewer than one batch of " +
                                std::to_string(per_rank) + "; lower --batch-size");

  // The epoch's training loss, summed on the device step by step (no host read per step).
  auto loss_sum = torch::zeros({}, torch::TensorOptions().dtype(torch::kFloat).device(device));
  // One training step on the batch `idx`: graph-safe (see step_graph.hpp), so that it can be
  // captured once and replayed.
  const auto train_step = [&](const torch::Tensor& idx) {
    auto x = augment_and_normalize(data.train_images.index_select(0, idx));
    x = x.contiguous(at::MemoryFormat::ChannelsLast);
    const auto y = data.train_labels.index_select(0, idx);
    optimizer.zero_grad();
    torch::Tensor loss;
    {
      AutocastScope autocast(o.precision, device);
      loss = torch::nn::functional::cross_entropy(model->forward(x), y);
    }
    loss_sum.add_(loss.detach().to(torch::kFloat));
    scaler.scale(loss).backward();
    sync.finish();
    if (scaler.enabled()) {
      scaler.unscale_and_update(params);
      optimizer.step_unless(scaler.found_inf());
    } else {
      optimizer.step();
    }
  };
  StepGraph runner(train_step, graph);
  const int64_t profiled = std::min(o.profile_steps, steps);
  StepProfiler profiler(ctx.is_main() ? o.profile_trace : std::string(), steps - profiled,
                        profiled, device);

  const int64_t check_every = cuda ? kStopCheckStepsGpu : 1;
  const auto run_start = Clock::now();
  int64_t steps_run = 0;  // in this process: the pace of the time left
  const auto left_after = [&](int epoch, int64_t step) {
    return time_left(since(run_start), static_cast<double>(steps_run),
                     static_cast<double>((o.epochs - epoch - 1) * steps + steps - step));
  };
  for (int epoch = progress.epochs_done; epoch < o.epochs; ++epoch) {
    // A run stopped part way through this epoch goes on at its step.
    const bool resumed = epoch == progress.epochs_done && progress.steps_done > 0;
    const int64_t first = resumed ? progress.steps_done : 0;
    const double carried = resumed ? progress.epoch_seconds : 0;
    sampler.set_epoch(epoch);
    // Augmentation draws depend on (seed, epoch, rank) only: a resumed run repeats them. The rest
    // of an epoch resumed part way draws from (seed, epoch, rank, step).
    torch::manual_seed(o.seed * 1000003ULL + static_cast<uint64_t>(epoch) * 1009ULL +
                       static_cast<uint64_t>(ctx.rank) + static_cast<uint64_t>(first) * 7919ULL);
    const auto order = torch::tensor(sampler.indices(), torch::kLong).to(device);
    model->train();
    {
      torch::NoGradGuard no_grad;
      loss_sum.fill_(resumed ? progress.epoch_loss_sum : 0.0);
    }
    const auto t0 = Clock::now();
    auto last_line = t0;
    const bool last_epoch = epoch + 1 == o.epochs;
    for (int64_t s = first; s < steps; ++s) {
      if (const int signal = stop_before(s, check_every, signals, *group)) {
        // Every rank: the loss so far, the checkpoint at this step, then the same exit.
        Progress stopped = progress;
        stopped.epochs_done = epoch;
        stopped.steps_done = s;
        stopped.epoch_loss_sum = group->mean(loss_sum.item<double>());
        stopped.epoch_seconds = carried + since(t0);
        stopped.total_time += since(t0);
        stopped.total_images += static_cast<double>((s - first) * o.batch_size);
        if (ctx.is_main()) {
          save_checkpoint(o.checkpoint_dir, model, optimizer, scaler, stopped, o);
          std::printf("[%s] Stopped by %s in epoch %d/%d at step %lld of %lld: checkpoint saved "
                      "to %s; run the job again (requeue it) to go on from this step\n",
                      time_stamp().c_str(), StopSignals::name(signal).c_str(), epoch + 1, o.epochs,
                      static_cast<long long>(s), static_cast<long long>(steps),
                      checkpoint_path(o.checkpoint_dir).c_str());
          std::fflush(stdout);
        }
        group->barrier();
        return kExitStopped;
      }
      if (last_epoch) profiler.before_step(s);
      runner.run(order.narrow(0, s * per_rank, per_rank));
      if (last_epoch) profiler.after_step(s);
      ++steps_run;
      if (ctx.is_main() && since(last_line) >= kStepLineSeconds) {
        last_line = Clock::now();
        std::printf("%s\n", step_line(epoch + 1, o.epochs, s + 1, steps,
                                      loss_sum.item<double>() / static_cast<double>(s + 1),
                                      left_after(epoch, s + 1))
                                .c_str());
        std::fflush(stdout);
      }
    }
    group->barrier();
    if (cuda) torch::cuda::synchronize();
    const double epoch_time = carried + since(t0);
    const double images = static_cast<double>(steps * o.batch_size);
    progress.total_time += since(t0);
    progress.total_images += static_cast<double>((steps - first) * o.batch_size);
    progress.steps_done = 0;
    const double train_loss = group->mean(loss_sum.item<double>()) / static_cast<double>(steps);

    const Eval v = evaluate(model, data, o, *group);
    progress.val_accuracy.push_back(v.accuracy);
    progress.epochs_done = epoch + 1;
    if (ctx.is_main()) {
      std::printf("%s\n", epoch_line(epoch + 1, o.epochs, epoch_time, train_loss, left_after(epoch, steps))
                              .c_str());
      std::printf("Validation Loss: %.4f, Validation Accuracy: %.4f\n", v.loss, v.accuracy);
      std::printf("Epoch Throughput: %.3f images/second\n", images / epoch_time);
      std::fflush(stdout);
      if (!o.metrics_file.empty())
        append_metrics(o.metrics_file,
                       {{"epoch", epoch + 1},
                        {"epoch_time", epoch_time},
                        {"train_loss", train_loss},
                        {"val_loss", v.loss},
                        {"val_accuracy", v.accuracy},
                        {"throughput", images / epoch_time},
                        {"tflops", images / epoch_time * train_flops_per_image / 1e12},
                        {"loss_scale", scaler.current_scale()}});
      if (!o.checkpoint_dir.empty())
        save_checkpoint(o.checkpoint_dir, model, optimizer, scaler, progress, o);
    }
    // Early stopping exactly as the reference: the last `patience` epochs all at the target.
    const auto& acc = progress.val_accuracy;
    if (static_cast<int>(acc.size()) >= o.patience &&
        std::all_of(acc.end() - o.patience, acc.end(),
                    [&](double a) { return a >= o.target_accuracy; })) {
      if (ctx.is_main())
        std::printf("Target accuracy reached. Early stopping after epoch %d.\n", epoch + 1);
      break;
    }
  }
  if (ctx.is_main()) {
    std::printf("\nTraining Summary:\n");
    std::printf("Total training time: %.3f seconds\n", progress.total_time);
    const double throughput =
        progress.total_time > 0 ? progress.total_images / progress.total_time : 0.0;
    std::printf("Throughput: %.3f images/second\n", throughput);
    std::printf("Compute: %.3f TFLOP/s (%.3f GFLOP per trained image)\n",
                throughput * train_flops_per_image / 1e12, train_flops_per_image / 1e9);
    std::printf("Number of nodes: %d\n", ctx.nodes);
    if (cuda) {
      std::printf("Number of GPUs per node: %d\n", ctx.local_world_size);
      std::printf("Total GPUs used: %d\n", ctx.world_size);
    } else {
      std::printf("Number of GPUs per node: 0 (%d CPU ranks per node)\n", ctx.local_world_size);
      std::printf("Total GPUs used: 0 (%d CPU ranks)\n", ctx.world_size);
    }
    std::printf("Training completed successfully.\n");
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace ddp::trainer
