// ddp-cifar100's command line: the reference script's options, plus this trainer's own.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "precision.hpp"

namespace ddp::trainer {

struct TrainOptions {
  // The reference's (train_ddp.py); defaults as there.
  int64_t batch_size = 512;  // global
  int epochs = 5;
  double base_lr = 0.01;
  double target_accuracy = 0.85;
  int patience = 2;
  // This trainer's.
  std::string data_dir = "./datasets";
  bool download = false;
  std::string download_url;  // empty: the official archive
  std::string download_md5;  // empty: the official archive's
  Precision precision = Precision::Fp32;
  double width = 1.0;
  uint64_t seed = 0;
  std::string checkpoint_dir;  // empty: no checkpoints
  std::string metrics_file;    // empty: none
  bool augment_test = false;
  int64_t max_train_samples = 0;  // 0: all
  int64_t max_test_samples = 0;
  int64_t max_steps = 0;          // per epoch; 0: all
  int threads = 0;                // intra-op threads on CPU; 0: OMP_NUM_THREADS or the default
  // GPU only; both on by default, off for comparison (bench/gpu_levers.sh).
  bool cuda_graph = true;   // capture the training step once, replay it (step_graph.hpp)
  bool gpu_fusion = true;   // fused batch norm, ReLU, dropout, residual kernels (bn_act_gpu.hpp)
  std::string profile_trace;  // empty: none; else a Chrome trace of profile_steps steps
  int64_t profile_steps = 10;   // the last ones of the last epoch
};

// Parses argv; on --help prints and exits 0, on a bad value prints the problem and exits 2.
TrainOptions parse_options(int argc, char** argv);

}  // namespace ddp::trainer
