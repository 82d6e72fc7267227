// Reads the DDP contract from the environment (spank_ddp's, torchrun's or plain srun's), shards a
// 10-sample data set as PyTorch's DistributedSampler does (seed 7, epoch 3), and prints one line:
//   contract=torchrun rank=1/4 local=1/2 node=0 master=127.0.0.1:29500 indices=...
#include <ddp/context.hpp>
#include <ddp/error.hpp>
#include <ddp/sampler.hpp>

#include <cstdint>
#include <exception>
#include <iostream>

int main() {
  try {
    const ddp::Context ctx = ddp::Context::from_environment();
    ddp::DistributedSampler sampler(10, ctx.world_size, ctx.rank, /*shuffle=*/true, /*seed=*/7);
    sampler.set_epoch(3);
    std::cout << "contract=" << ddp::contract_source_name(ctx.source) << " rank=" << ctx.rank << "/"
              << ctx.world_size << " local=" << ctx.local_rank << "/" << ctx.local_world_size
              << " node=" << ctx.node_rank << " master=" << ctx.master_addr << ":"
              << ctx.master_port << " indices=";
    const char* sep = "";
    for (const std::int64_t i : sampler.indices()) {
      std::cout << sep << i;
      sep = ",";
    }
    std::cout << "\n";
  } catch (const std::exception& e) {
    std::cerr << "ddp-consumer: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
