// One UDP socket, for the two heartbeats that talk across nodes: the failure watch's between node
// watches (watch/), and libddp's between ranks (runtime/src/peer_watch.cpp). The listener is bound
// to a port on every address, a sender connected to the listener's (so it hears nothing else).
// Non-blocking; nothing here waits.
//
// A connected sender hears only datagrams whose source is the address it resolved the listener's
// name to. The listener is bound to the wildcard address, so each answer leaves from the address
// its question was sent to (IP_PKTINFO, IPV6_PKTINFO): a listener whose name resolves to a
// secondary address or an alias is still heard.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ddp::net {

struct Address {
  sockaddr_storage addr{};
  socklen_t len = 0;
  // Where a received datagram arrived (its destination address), for the answer to leave from.
  int local_family = AF_UNSPEC;
  in_addr local4{};
  in6_addr local6{};
  bool operator==(const Address& o) const;  // the peer's address alone
  unsigned port() const;
};

class Udp {
 public:
  Udp() = default;
  ~Udp();
  Udp(const Udp&) = delete;
  Udp& operator=(const Udp&) = delete;

  // The listener: on PORT (0: one the kernel picks, local_port() says which), IPv6 and IPv4 where
  // the node has both. Returns why not.
  std::optional<std::string> listen(unsigned port);
  // A sender: resolves the listener's address and connects to the first address that takes (a
  // new socket, the old one closed, when it is aimed again). Returns why not.
  std::optional<std::string> aim(const std::string& host, unsigned port);
  // A sender to a listener that is on one of `ports` of `host`, it does not know which: each
  // datagram goes to all of them, and the socket hears anyone, until settle() connects it to the
  // one that answered. Returns why not.
  std::optional<std::string> aim_any(const std::string& host, const std::vector<std::uint16_t>& ports);
  // The listener is `at` (an answer came from there), if `at` is one of the candidates: connected
  // to it from now on.
  void settle(const Address& at);
  bool settled() const { return candidates_.empty(); }
  const std::vector<Address>& candidates() const { return candidates_; }

  int fd() const { return fd_; }
  unsigned local_port() const;
  const Address& head() const { return head_; }
  // To a peer a datagram came from, from the address it came to.
  void send(const Address& to, std::string_view bytes) const;
  // False when the listener's port refused an earlier datagram (nobody listens there now).
  bool send_to_head(std::string_view bytes) const;
  // One datagram into BUF, its full size (above SIZE: it was cut, and is to be refused), or
  // nullopt when none is waiting. Nothing is allocated. `refused`, if given, is set when a
  // connected socket learnt that the listener's port refused an earlier datagram.
  std::optional<std::size_t> receive(char* buf, std::size_t size, Address& from, bool* refused = nullptr) const;
  // The listener: how many datagrams the kernel dropped so far because its queue was full
  // (SO_RXQ_OVFL), as of the last one received; a flood shows here.
  std::uint32_t dropped() const { return dropped_; }

 private:
  int fd_ = -1;
  Address head_;
  mutable std::uint32_t dropped_ = 0;
  std::vector<Address> candidates_;  // aim_any: where the listener may be, until settle()
};

}  // namespace ddp::net
