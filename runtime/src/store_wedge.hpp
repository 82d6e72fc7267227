// LibTorch's classic TCPStore server (1.13, and 2.x built without libuv, as Debian builds it) reads
// each request with blocking recv() calls on its one thread. A client that vanishes in the middle
// of a request (its node lost power or its link went down between two segments) leaves that
// thread waiting for bytes that never come, and the store stops answering every rank until TCP
// gives up, hours later; each rank then blames rank 0. Rank 0 can see this from inside its own
// process: one of its threads asleep in recvfrom() on a connection the store's port accepted, not
// woken for seconds. Shutting that one connection down ends the read with an error, and the server
// drops that client as it drops any client whose connection fails.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace ddp::detail {

struct StoreRead {
  pid_t thread = 0;
  int fd = -1;
  std::uint64_t switches = 0;  // the thread's context switches: unchanged means never woken
  std::string peer;            // the client's address, "10.0.0.2:40112"
};

// This process's threads now asleep in recvfrom() on a socket whose local port is `port` (the
// server's side of the store's connections; the clients' sockets have ephemeral local ports).
std::vector<StoreRead> store_reads(int port);

// Of `now`, the reads also in `before` (same thread, same socket) whose thread was not woken in
// between: stuck on one request the whole time.
std::vector<StoreRead> stuck_reads(const std::vector<StoreRead>& before,
                                   const std::vector<StoreRead>& now);

// Ends the connection under `read`, so the server's recv() fails and it drops that client. False
// when that descriptor is no longer that connection.
bool drop_connection(const StoreRead& read);

}  // namespace ddp::detail
