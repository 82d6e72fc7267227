// SGD with momentum and weight decay, PyTorch's update rule (dampening 0, no Nesterov):
//   g = grad + wd * p;  buf = momentum * buf + g;  p -= lr * buf
// with `keep` a 0-d 0/1 tensor on the device: 0 leaves parameters and buffers unchanged (an fp16
// step whose gradients overflowed), without the host ever reading it.
// On a GPU (LibTorch 2.4 and newer) a step is PyTorch's fused SGD (the kernel behind
// torch.optim.SGD(fused=True)): a few multi-tensor launches instead of ~7 kernels per parameter,
// one pass over parameters, gradients and buffers; it skips the step where found_inf is 1. The
// loop of tensor operations stays for the CPU and for older LibTorch.
#pragma once

#include <vector>

#include <torch/torch.h>

namespace ddp::trainer {

class Sgd {
 public:
  Sgd(std::vector<torch::Tensor> params, double lr, double momentum, double weight_decay);
  void step();                          // always applied
  void step(const torch::Tensor& keep);  // applied where keep is 1
  // Applied unless found_inf (float [1], 0 or 1, as LossScaler::found_inf()) is 1.
  void step_unless(const torch::Tensor& found_inf);
  void zero_grad();
  // Whether step() and step_unless() take the fused kernel for the current gradients.
  bool fused() const;
  std::vector<torch::Tensor>& momentum_buffers() { return buffers_; }
  const std::vector<torch::Tensor>& parameters() const { return params_; }

 private:
  bool fused_step(const torch::Tensor* found_inf);

  std::vector<torch::Tensor> params_;
  std::vector<torch::Tensor> buffers_;
  double lr_, momentum_, weight_decay_;
};

}  // namespace ddp::trainer
