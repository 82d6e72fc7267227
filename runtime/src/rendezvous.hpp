// Meeting point of all ranks: the TCPStore at MASTER_ADDR:MASTER_PORT, and an arrival check that
// names the ranks that never came instead of waiting forever.
#pragma once

#include <chrono>

#include <torch/csrc/distributed/c10d/Store.hpp>

#include "ddp/context.hpp"

namespace ddp::detail {

c10::intrusive_ptr<c10d::Store> rendezvous(const Context& context,
                                           std::chrono::milliseconds timeout);

}  // namespace ddp::detail
