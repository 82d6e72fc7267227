// The process group of a DDP job, built from the environment contract: a TCPStore rendezvous at
// MASTER_ADDR:MASTER_PORT, then NCCL (CUDA build, GPUs present) or Gloo. Every failure to meet
// ends with a message that says what is wrong (which ranks never arrived, address unreachable,
// port in use) instead of a hang, and so does every failure after that (which rank was lost).
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "ddp/context.hpp"
#include "ddp/rendezvous.hpp"

namespace ddp {

struct ProcessGroupOptions {
  // How long ranks wait for each other at start-up, and for any collective after that.
  // DDP_RENDEZVOUS_TIMEOUT / DDP_TIMEOUT (seconds) override the defaults.
  std::chrono::milliseconds rendezvous_timeout = std::chrono::seconds(120);
  std::chrono::milliseconds timeout = std::chrono::seconds(300);
  // Every rank beats once a second to rank 0 (a UDP datagram; rank 0 answers each). A failed
  // collective then names the ranks that stopped; a rank silent for this long is declared lost
  // even while collectives hang, and every rank ends (non-zero, with the reason) at most 10 s
  // after a loss is known.
  // DDP_PEER_TIMEOUT (seconds; 0 turns the watch off) overrides it.
  std::chrono::milliseconds peer_timeout = std::chrono::seconds(60);
  std::optional<contract::Backend> backend;  // default: the contract's, else by GPUs
  // Where the DDP_*_TIMEOUT overrides are read; empty: the process's environment.
  EnvLookup env;
};

// An in-flight collective.
class Pending {
 public:
  Pending();
  Pending(Pending&&) noexcept;
  Pending& operator=(Pending&&) noexcept;
  ~Pending();
  void wait();  // throws ddp::Error naming the operation when it failed or timed out
  bool valid() const;

 private:
  friend class ProcessGroup;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

class ProcessGroup {
 public:
  // Rendezvous and build the group. Throws ddp::Error.
  static std::shared_ptr<ProcessGroup> create(const Context& context,
                                              ProcessGroupOptions options = {});
  // Only the rendezvous of create(context), with the same checks and time-outs, for a program that
  // exchanges something before it builds the backend on it (one rank fetching data while the
  // others wait, say). Throws ddp::Error.
  static std::shared_ptr<Rendezvous> meet(const Context& context, ProcessGroupOptions options = {});
  // The backend on ranks that have already met (options.rendezvous_timeout is not used).
  static std::shared_ptr<ProcessGroup> create(const std::shared_ptr<Rendezvous>& rendezvous,
                                              ProcessGroupOptions options = {});
  ~ProcessGroup();

  const Context& context() const { return context_; }
  const std::string& backend_name() const { return backend_name_; }
  // The device this rank computes on: cuda:LOCAL_RANK with NCCL, else CPU.
  torch::Device device() const { return device_; }

  // Sum over ranks, in place, asynchronously (flat, contiguous tensors on device()).
  Pending allreduce_sum(torch::Tensor& tensor, const char* what);
  // Rank `root`'s values to every rank, in place.
  void broadcast(std::vector<torch::Tensor>& tensors, int root = 0);
  void barrier();

  // Metric helpers: the mean (or sum) over ranks of each value.
  std::vector<double> mean(const std::vector<double>& values);
  double mean(double value) { return mean(std::vector<double>{value}).front(); }
  std::vector<double> sum(const std::vector<double>& values);

  // Waits for every rank to reach this point, then releases the backend. Idempotent.
  void shutdown();

  // A group of some of the ranks, e.g. one per node for measuring the link between two nodes.
  // `ranks` are global ranks, the subgroup's rank i is ranks[i]; this rank must be one of them.
  // Only the members call it (with the same `ranks` and `name`, unique among the groups made
  // over the job's life); its collectives involve them alone. Throws ddp::Error.
  std::shared_ptr<ProcessGroup> subgroup(const std::vector<int>& ranks, const std::string& name);

  struct Native;  // the LibTorch objects, hidden from users of this header

 private:
  ProcessGroup(const Context& context, std::string backend, torch::Device device,
               std::unique_ptr<Native> native, std::chrono::milliseconds timeout);
  Context context_;
  std::string backend_name_;
  torch::Device device_;
  std::unique_ptr<Native> native_;
  std::chrono::milliseconds timeout_;
  bool shut_down_ = false;
};

}  // namespace ddp
