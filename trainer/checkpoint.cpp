#include "checkpoint.hpp"

#include <unistd.h>

#include <filesystem>
#include <stdexcept>

namespace ddp::trainer {
namespace {

namespace fs = std::filesystem;

torch::Tensor scalar(double v) { return torch::tensor({v}, torch::kFloat64); }
double read_scalar(torch::serialize::InputArchive& a, const std::string& key) {
  torch::Tensor t;
  a.read(key, t);
  return t.item<double>();
}

// What must match for a checkpoint to continue this run.
const std::vector<std::pair<std::string, double>> identity(const TrainOptions& o) {
  return {{"meta/width", o.width},
          {"meta/batch_size", static_cast<double>(o.batch_size)},
          {"meta/seed", static_cast<double>(o.seed)}};
}

}  // namespace

std::string checkpoint_path(const std::string& dir) { return (fs::path(dir) / "checkpoint.pt").string(); }

void save_checkpoint(const std::string& dir, WideResNet& model, Sgd& optimizer,
                     const LossScaler& scaler, const Progress& progress,
                     const TrainOptions& options) {
  torch::NoGradGuard no_grad;
  torch::serialize::OutputArchive a;
  for (const auto& item : model->named_parameters()) a.write("model/" + item.key(), item.value().cpu());
  for (const auto& item : model->named_buffers()) a.write("model/" + item.key(), item.value().cpu());
  auto& buffers = optimizer.momentum_buffers();
  for (std::size_t i = 0; i < buffers.size(); ++i)
    a.write("optimizer/momentum/" + std::to_string(i), buffers[i].cpu());
  a.write("scaler", scaler.state());
  a.write("progress/epochs_done", scalar(progress.epochs_done));
  a.write("progress/val_accuracy",
          progress.val_accuracy.empty() ? torch::zeros({0}, torch::kFloat64)
                                        : torch::tensor(progress.val_accuracy, torch::kFloat64));
  a.write("progress/total_time", scalar(progress.total_time));
  a.write("progress/total_images", scalar(progress.total_images));
  a.write("progress/steps_done", scalar(static_cast<double>(progress.steps_done)));
  a.write("progress/epoch_loss_sum", scalar(progress.epoch_loss_sum));
  a.write("progress/epoch_seconds", scalar(progress.epoch_seconds));
  for (const auto& [key, value] : identity(options)) a.write(key, scalar(value));

  fs::create_directories(dir);
  const std::string final_path = checkpoint_path(dir);
  const std::string tmp = final_path + ".tmp." + std::to_string(getpid());
  a.save_to(tmp);
  fs::rename(tmp, final_path);
}

std::optional<Progress> load_checkpoint(const std::string& dir, WideResNet& model, Sgd& optimizer,
                                        LossScaler& scaler, const TrainOptions& options) {
  const std::string path = checkpoint_path(dir);
  if (!fs::exists(path)) return std::nullopt;
  torch::serialize::InputArchive a;
  try {
    a.load_from(path);
  } catch (const std::exception& e) {
    throw std::runtime_error("checkpoint " + path + " cannot be read (" + e.what() +
                             "); remove it to start over");
  }
  for (const auto& [key, value] : identity(options))
    if (read_scalar(a, key) != value)
      throw std::runtime_error("checkpoint " + path + " was made with a different " +
                               key.substr(5) + " (" + std::to_string(read_scalar(a, key)) +
                               ", now " + std::to_string(value) +
                               "); use the same options, or another --checkpoint-dir");
  torch::NoGradGuard no_grad;
  for (auto& item : model->named_parameters()) {
    torch::Tensor t;
    a.read("model/" + item.key(), t);
    item.value().copy_(t);
  }
  for (auto& item : model->named_buffers()) {
    torch::Tensor t;
    a.read("model/" + item.key(), t);
    item.value().copy_(t);
  }
  auto& buffers = optimizer.momentum_buffers();
  for (std::size_t i = 0; i < buffers.size(); ++i) {
    torch::Tensor t;
    a.read("optimizer/momentum/" + std::to_string(i), t);
    buffers[i].copy_(t);
  }
  torch::Tensor s;
  a.read("scaler", s);
  scaler.load_state(s);
  Progress p;
  p.epochs_done = static_cast<int>(read_scalar(a, "progress/epochs_done"));
  torch::Tensor acc;
  a.read("progress/val_accuracy", acc);
  p.val_accuracy.assign(acc.data_ptr<double>(), acc.data_ptr<double>() + acc.numel());
  p.total_time = read_scalar(a, "progress/total_time");
  p.total_images = read_scalar(a, "progress/total_images");
  // Checkpoints of earlier releases end at an epoch's end.
  torch::Tensor t;
  if (a.try_read("progress/steps_done", t)) p.steps_done = static_cast<std::int64_t>(t.item<double>());
  if (a.try_read("progress/epoch_loss_sum", t)) p.epoch_loss_sum = t.item<double>();
  if (a.try_read("progress/epoch_seconds", t)) p.epoch_seconds = t.item<double>();
  return p;
}

}  // namespace ddp::trainer
