#include "options.hpp"

#include <cstdlib>
#include <iostream>

#include <CLI/CLI.hpp>

#include "version.hpp"

namespace ddp::trainer {

TrainOptions parse_options(int argc, char** argv) {
  TrainOptions o;
  CLI::App app{"CIFAR-100 WideResNet training with PyTorch DDP semantics, launched by spank_ddp, "
               "torchrun or srun (the reference recipe of the PyTorch-on-Olivia guide)."};
  app.option_defaults()->always_capture_default();
  app.set_version_flag("--version", std::string("ddp-cifar100 ") + ddp::plan::kVersion);
  app.add_option("--batch-size", o.batch_size, "global batch size (split over the ranks)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 24));
  app.add_option("--epochs", o.epochs, "epochs to train")->check(CLI::Range(1, 100000));
  app.add_option("--base-lr", o.base_lr, "SGD learning rate")->check(CLI::Range(0.0, 100.0));
  app.add_option("--target-accuracy", o.target_accuracy,
                 "stop once the last --patience epochs all reach it")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--patience", o.patience, "epochs at the target before stopping")
      ->check(CLI::Range(1, 100000));
  app.add_option("--data-dir", o.data_dir, "where CIFAR-100's binary files are (or go)");
  app.add_flag("--download", o.download, "fetch the official archive if it is not there");
  app.add_option("--download-url", o.download_url, "archive URL instead of the official one");
  app.add_option("--download-md5", o.download_md5,
                 "the MD5 of the archive --download-url serves, when it is not the official one");
  std::string precision = "fp32";
  app.add_option("--precision", precision, "fp32, fp16 (GPU, loss scaling) or bf16")
      ->check(CLI::IsMember({"fp32", "fp16", "bf16"}));
  app.add_option("--width", o.width, "scales the 160/320/640 channels; 1.0 = the reference model")
      ->check(CLI::Range(0.01, 8.0));
  app.add_option("--seed", o.seed, "seed of initialisation, shuffling and augmentation");
  app.add_option("--checkpoint-dir", o.checkpoint_dir,
                 "write a checkpoint each epoch, and at the next step on SIGTERM or SIGUSR1 (then "
                 "exit 3), and resume from the last one");
  app.add_option("--metrics", o.metrics_file, "append one JSON line per epoch to this file");
  app.add_flag("--augment-test", o.augment_test,
               "augment test images as the reference does (default: evaluate them as they are)");
  app.add_option("--max-train-samples", o.max_train_samples, "use only the first N training images")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--max-test-samples", o.max_test_samples, "use only the first N test images")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--max-steps", o.max_steps, "at most N steps per epoch")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--threads", o.threads, "CPU threads per rank (default: OMP_NUM_THREADS)")
      ->check(CLI::Range(0, 4096));
  std::string cuda_graph = "on", gpu_fusion = "on";
  app.add_option("--cuda-graph", cuda_graph,
                 "GPU: capture the training step in a CUDA graph and replay it (on, off)")
      ->check(CLI::IsMember({"on", "off"}));
  app.add_option("--gpu-fusion", gpu_fusion,
                 "GPU: fused batch norm + ReLU (+ dropout + residual) kernels (on, off)")
      ->check(CLI::IsMember({"on", "off"}));
  app.add_option("--profile-trace", o.profile_trace,
                 "write a Chrome trace (PyTorch profiler) of the last --profile-steps steps");
  app.add_option("--profile-steps", o.profile_steps, "steps in the --profile-trace")
      ->check(CLI::Range(int64_t{1}, int64_t{100000}));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    std::exit(app.exit(e));
  }
  o.precision = parse_precision(precision);
  o.cuda_graph = cuda_graph == "on";
  o.gpu_fusion = gpu_fusion == "on";
  return o;
}

}  // namespace ddp::trainer
