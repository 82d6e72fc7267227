// SGD with momentum and weight decay, PyTorch's update rule (dampening 0, no Nesterov):
//   g = grad + wd * p;  buf = momentum * buf + g;  p -= lr * buf
// with `keep` a 0-d 0/1 tensor on the device: 0 leaves parameters and buffers unchanged (an fp16
// step whose gradients overflowed), without the host ever reading it.
#pragma once

#include <vector>

#include <torch/torch.h>

namespace ddp::trainer {

class Sgd {
 public:
  Sgd(std::vector<torch::Tensor> params, double lr, double momentum, double weight_decay);
  void step();                          // always applied
  void step(const torch::Tensor& keep);  // applied where keep is 1
  void zero_grad();
  std::vector<torch::Tensor>& momentum_buffers() { return buffers_; }
  const std::vector<torch::Tensor>& parameters() const { return params_; }

 private:
  std::vector<torch::Tensor> params_;
  std::vector<torch::Tensor> buffers_;
  double lr_, momentum_, weight_decay_;
};

}  // namespace ddp::trainer
