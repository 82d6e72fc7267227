// Meeting point of all ranks: the TCPStore at MASTER_ADDR:MASTER_PORT, and an arrival check that
// names the ranks that never came instead of waiting forever.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <torch/csrc/distributed/c10d/Store.hpp>

#include "ddp/context.hpp"
#include "ddp/rendezvous.hpp"
#include "relay_rule.hpp"
#include "store_relay.hpp"

namespace ddp::detail {

// A duration as seconds for messages: "4", "2.5".
std::string seconds_text(std::chrono::milliseconds d);

// The store key under which each rank leaves the name of its node on arrival.
std::string arrival_key(int rank);

// The count of tasks that arrived (every task adds one, two that claim one RANK included).
inline constexpr const char* kArrivalsKey = "ddp/arrivals";

// Rank 0's open files for the rendezvous: its store's clients (one connection each; two on
// LibTorch before 2.1), both ends of rank 0's own readers (Rendezvous::gather past a few hundred
// ranks), and 64 for the program's own files, the heartbeat's one socket among them
// (peer_watch.hpp). Relayed, the clients are each node's leader's two (its connection for what rank
// 0 answers at once, and one for the wait a node's ranks share): what the rendezvous cannot do
// without (`needed`). Every rank's own connection (`wanted`) is what the ranks of leaders that never
// came add, reaching rank 0 directly, and what an unrelayed rendezvous needs.
struct OpenFiles {
  std::uint64_t needed = 0;
  std::uint64_t wanted = 0;
  std::uint64_t readers = 0;  // of both: the readers', opened by the first gather that needs them
};
OpenFiles rank0_open_files(const Context& c);

// Makes `first`, a store connection's first request (it must wait for the server's answer), on
// `store` (none: a connection from `reconnect`). Thousands of ranks connecting at once overflow the store's listen queue: the kernel
// completes a connection the server never accepts, and resets it when the rank writes. So a rank
// other than 0 connects again with `reconnect` while `timeout` from `since` lasts, and the last
// failure is thrown once it is over (a listener that never answers, another program on the port,
// lets the first request's own wait run out instead).
c10::intrusive_ptr<c10d::Store> first_answer(c10::intrusive_ptr<c10d::Store> store, int rank,
                                             std::chrono::steady_clock::time_point since,
                                             std::chrono::milliseconds timeout,
                                             const std::function<void(c10d::Store&)>& first,
                                             const std::function<c10::intrusive_ptr<c10d::Store>()>& reconnect);

// Meets every rank through `store`, this rank's connection to rank 0's store (rank 0: its server)
// or its node's relay, made since `start`.
c10::intrusive_ptr<c10d::Store> rendezvous(const Context& context, c10::intrusive_ptr<c10d::Store> store,
                                           std::chrono::steady_clock::time_point start,
                                           std::chrono::milliseconds timeout);

}  // namespace ddp::detail

namespace ddp {

struct Rendezvous::Native {
  c10::intrusive_ptr<c10d::Store> store;
  // Rank 0's extra connections for reading many ranks' texts at once (gather), made when first needed.
  std::vector<c10::intrusive_ptr<c10d::Store>> readers;
  // A node's leader (DDP_STORE_RELAY): its node's ranks reach the store through it for as long as
  // anything holds the store (a process group keeps it too).
  std::shared_ptr<detail::StoreRelay> relay;
};

}  // namespace ddp
