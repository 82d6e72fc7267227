// The watch's one UDP socket: the head's bound to the step's port on every address, a member's
// unbound, sending to the head's. Non-blocking; nothing here waits.
#pragma once

#include <sys/socket.h>

#include <optional>
#include <string>

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
  // A member: resolves the head's address (MASTER_ADDR). Returns why not.
  std::optional<std::string> aim(const std::string& host, unsigned port);

  int fd() const { return fd_; }
  const Address& head() const { return head_; }
  void send(const Address& to, const std::string& bytes) const;
  // One datagram, or nullopt when none is waiting; longer ones are cut (and then refused).
  std::optional<std::string> receive(Address& from) const;

 private:
  int fd_ = -1;
  Address head_;
};

}  // namespace ddp::watch
