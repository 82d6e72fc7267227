// Meeting point of all ranks: the TCPStore at MASTER_ADDR:MASTER_PORT, and an arrival check that
// names the ranks that never came instead of waiting forever.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include <torch/csrc/distributed/c10d/Store.hpp>

#include "ddp/context.hpp"
#include "ddp/rendezvous.hpp"

namespace ddp::detail {

// A duration as seconds for messages: "4", "2.5".
std::string seconds_text(std::chrono::milliseconds d);

// The store key under which each rank leaves the name of its node on arrival.
std::string arrival_key(int rank);

// The count of tasks that arrived (every task adds one, two that claim one RANK included).
inline constexpr const char* kArrivalsKey = "ddp/arrivals";

c10::intrusive_ptr<c10d::Store> rendezvous(const Context& context,
                                           std::chrono::milliseconds timeout);

}  // namespace ddp::detail

namespace ddp {

struct Rendezvous::Native {
  c10::intrusive_ptr<c10d::Store> store;
  // Rank 0's extra connections for reading many ranks' texts at once (gather), made when first needed.
  std::vector<c10::intrusive_ptr<c10d::Store>> readers;
};

}  // namespace ddp
