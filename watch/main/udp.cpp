#include "udp.hpp"

#include <netdb.h>
#include <netinet/in.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "datagram.hpp"

namespace ddp::watch {
namespace {

int open_socket(int family) {
  return ::socket(family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
}

// A thousand members beating at once must not overflow the head's queue (the kernel caps the
// size at net.core.rmem_max for an unprivileged process; what it grants is enough for hundreds).
void grow_receive_buffer(int fd) {
  const int size = 4 << 20;
  (void)::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
}

}  // namespace

bool Address::operator==(const Address& o) const {
  return len == o.len && std::memcmp(&addr, &o.addr, len) == 0;
}

Udp::~Udp() {
  if (fd_ >= 0) ::close(fd_);
}

std::optional<std::string> Udp::listen(unsigned port) {
  // Dual stack first: members reach MASTER_ADDR by whichever address it resolves to.
  fd_ = open_socket(AF_INET6);
  if (fd_ >= 0) {
    const int off = 0;
    (void)::setsockopt(fd_, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof off);
    sockaddr_in6 a{};
    a.sin6_family = AF_INET6;
    a.sin6_addr = in6addr_any;
    a.sin6_port = htons(static_cast<std::uint16_t>(port));
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
      grow_receive_buffer(fd_);
      return std::nullopt;
    }
    const int e = errno;
    ::close(fd_);
    fd_ = -1;
    if (e != EAFNOSUPPORT && e != EADDRNOTAVAIL) return std::string("bind: ") + std::strerror(e);
  }
  fd_ = open_socket(AF_INET);
  if (fd_ < 0) return std::string("socket: ") + std::strerror(errno);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_ANY);
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  if (::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    const int e = errno;
    ::close(fd_);
    fd_ = -1;
    return std::string("bind: ") + std::strerror(e);
  }
  grow_receive_buffer(fd_);
  return std::nullopt;
}

std::optional<std::string> Udp::aim(const std::string& host, unsigned port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  const int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &found);
  if (rc != 0) return "cannot resolve " + host + ": " + ::gai_strerror(rc);
  std::optional<std::string> why = std::string("no address for ") + host;
  for (addrinfo* a = found; a; a = a->ai_next) {
    fd_ = open_socket(a->ai_family);
    if (fd_ < 0) continue;
    std::memcpy(&head_.addr, a->ai_addr, a->ai_addrlen);
    head_.len = a->ai_addrlen;
    why.reset();
    break;
  }
  ::freeaddrinfo(found);
  return why;
}

void Udp::send(const Address& to, const std::string& bytes) const {
  if (fd_ < 0 || to.len == 0) return;
  // A full queue or an unreachable peer loses this datagram; the protocol sends again.
  (void)::sendto(fd_, bytes.data(), bytes.size(), MSG_DONTWAIT | MSG_NOSIGNAL,
                 reinterpret_cast<const sockaddr*>(&to.addr), to.len);
}

std::optional<std::string> Udp::receive(Address& from) const {
  if (fd_ < 0) return std::nullopt;
  char buf[kMaxDatagram + 1];
  for (;;) {
    from.len = sizeof from.addr;
    const ssize_t n = ::recvfrom(fd_, buf, sizeof buf, MSG_DONTWAIT,
                                 reinterpret_cast<sockaddr*>(&from.addr), &from.len);
    if (n < 0 && errno == EINTR) continue;
    // ECONNREFUSED and the like: an earlier send found nobody; the next one may not.
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) continue;
    if (n < 0) return std::nullopt;
    return std::string(buf, static_cast<std::size_t>(n));
  }
}

}  // namespace ddp::watch
