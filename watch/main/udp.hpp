// The watch's one UDP socket: the head's bound to the step's port on every address, a member's
// connected to the head's (so it hears nothing else). Non-blocking; nothing here waits.
//
// A connected member hears only datagrams whose source is the address it resolved MASTER_ADDR
// to. The head's socket is bound to the wildcard address, so its answers leave from the address
// the kernel's route to the member picks: the same one in any usual setup (one address per
// interface), but a head whose MASTER_ADDR is a secondary address or an alias would answer from
// another, and its members would never hear it (the head then warns that they never reached it,
// as for filtered UDP). Answering from the datagram's own destination (IP_PKTINFO) would lift that.
#pragma once

#include <sys/socket.h>

#include <optional>
#include <string>
#include <string_view>

namespace ddp::watch {

struct Address {
  sockaddr_storage addr{};
  socklen_t len = 0;
  bool operator==(const Address& o) const;
};

class Udp {
 public:
  Udp() = default;
  ~Udp();
  Udp(const Udp&) = delete;
  Udp& operator=(const Udp&) = delete;

  // The head: listens on PORT (IPv6 and IPv4 where the node has both). Returns why not.
  std::optional<std::string> listen(unsigned port);
  // A member: resolves the head's address (MASTER_ADDR) and connects to the first address that
  // takes. Returns why not.
  std::optional<std::string> aim(const std::string& host, unsigned port);

  int fd() const { return fd_; }
  const Address& head() const { return head_; }
  void send(const Address& to, const std::string& bytes) const;
  void send_to_head(std::string_view bytes) const;
  // One datagram into BUF, its full size (above SIZE: it was cut, and is to be refused), or
  // nullopt when none is waiting. Nothing is allocated.
  std::optional<std::size_t> receive(char* buf, std::size_t size, Address& from) const;

 private:
  int fd_ = -1;
  Address head_;
};

}  // namespace ddp::watch
