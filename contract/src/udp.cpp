#include "udp.hpp"

#include <netdb.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>

namespace ddp::net {
namespace {

int open_socket(int family) {
  return ::socket(family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
}

// Thousands of senders beating at once must not overflow the listener's queue (the kernel caps
// the size at net.core.rmem_max for an unprivileged process; what it grants is enough for
// hundreds of datagrams).
void grow_receive_buffer(int fd) {
  const int size = 4 << 20;
  (void)::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
}

// Each datagram's destination address comes with it, for the answer to leave from. A dual-stack
// socket hears IPv4 too, whose destination IP_PKTINFO gives.
void ask_destinations(int fd, int family) {
  const int on = 1;
  if (family == AF_INET6) (void)::setsockopt(fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, &on, sizeof on);
  (void)::setsockopt(fd, IPPROTO_IP, IP_PKTINFO, &on, sizeof on);
}

bool is_v4_mapped(const sockaddr_storage& a) {
  if (a.ss_family != AF_INET6) return false;
  const auto& v6 = reinterpret_cast<const sockaddr_in6&>(a);
  return IN6_IS_ADDR_V4MAPPED(&v6.sin6_addr);
}

// 0, or the errno of the bind.
int bind_any(int fd, int family, unsigned port) {
  const auto p = htons(static_cast<std::uint16_t>(port));
  int rc;
  if (family == AF_INET6) {
    const int off = 0;
    (void)::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof off);
    sockaddr_in6 a{};
    a.sin6_family = AF_INET6;
    a.sin6_addr = in6addr_any;
    a.sin6_port = p;
    rc = ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  } else {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_ANY);
    a.sin_port = p;
    rc = ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  }
  return rc == 0 ? 0 : errno;
}

}  // namespace

bool Address::operator==(const Address& o) const {
  return len == o.len && std::memcmp(&addr, &o.addr, len) == 0;
}

unsigned Address::port() const {
  if (addr.ss_family == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6&>(addr).sin6_port);
  if (addr.ss_family == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in&>(addr).sin_port);
  return 0;
}

Udp::~Udp() {
  if (fd_ >= 0) ::close(fd_);
}

std::optional<std::string> Udp::listen(unsigned port) {
  // Dual stack first: senders reach the listener by whichever address its name resolves to. A
  // node without IPv6 listens on IPv4 alone.
  for (const int family : {AF_INET6, AF_INET}) {
    const int fd = open_socket(family);
    const int e = fd < 0 ? errno : bind_any(fd, family, port);
    if (e == 0) {
      fd_ = fd;
      grow_receive_buffer(fd_);
      ask_destinations(fd_, family);
      const int on = 1;
      (void)::setsockopt(fd_, SOL_SOCKET, SO_RXQ_OVFL, &on, sizeof on);
      return std::nullopt;
    }
    if (fd >= 0) ::close(fd);
    if (family == AF_INET || (e != EAFNOSUPPORT && e != EADDRNOTAVAIL))
      return std::string(fd < 0 ? "socket: " : "bind: ") + std::strerror(e);
  }
  return std::nullopt;  // not reached: IPv4 returns either way
}

unsigned Udp::local_port() const {
  sockaddr_storage a{};
  socklen_t len = sizeof a;
  if (fd_ < 0 || ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0) return 0;
  if (a.ss_family == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6&>(a).sin6_port);
  return ntohs(reinterpret_cast<const sockaddr_in&>(a).sin_port);
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
  candidates_.clear();
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
    head_ = Address{};
  }
  // Each address in turn, until one takes: connected, the socket hears only the listener's
  // address (the kernel drops datagrams from anywhere else), and a refused port shows as an error.
  for (addrinfo* a = found; a; a = a->ai_next) {
    const int fd = open_socket(a->ai_family);
    if (fd < 0) {
      why = std::string("socket: ") + std::strerror(errno);
      continue;
    }
    if (::connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
      why = "connect to " + host + ": " + std::strerror(errno);
      ::close(fd);
      continue;
    }
    fd_ = fd;
    std::memcpy(&head_.addr, a->ai_addr, a->ai_addrlen);
    head_.len = a->ai_addrlen;
    why.reset();
    break;
  }
  ::freeaddrinfo(found);
  return why;
}

std::optional<std::string> Udp::aim_any(const std::string& host, const std::vector<std::uint16_t>& ports) {
  if (ports.empty()) return std::string("no port to send to");
  if (const auto why = aim(host, ports.front())) return why;
  // The resolved address, with each port; the socket unconnected again (AF_UNSPEC), so that an
  // answer from whichever port holds the listener is heard.
  for (const auto port : ports) {
    Address a = head_;
    if (a.addr.ss_family == AF_INET6)
      reinterpret_cast<sockaddr_in6&>(a.addr).sin6_port = htons(port);
    else
      reinterpret_cast<sockaddr_in&>(a.addr).sin_port = htons(port);
    candidates_.push_back(a);
  }
  sockaddr none{};
  none.sa_family = AF_UNSPEC;
  if (::connect(fd_, &none, sizeof none) != 0) return std::string("disconnect: ") + std::strerror(errno);
  return std::nullopt;
}

void Udp::settle(const Address& at) {
  if (candidates_.empty() || at.len == 0) return;
  if (std::find(candidates_.begin(), candidates_.end(), at) == candidates_.end()) return;
  if (::connect(fd_, reinterpret_cast<const sockaddr*>(&at.addr), at.len) != 0) return;
  head_ = at;
  head_.local_family = AF_UNSPEC;
  candidates_.clear();
}

bool Udp::send_to_head(std::string_view bytes) const {
  if (fd_ >= 0 && !candidates_.empty()) {
    for (const Address& a : candidates_)
      (void)::sendto(fd_, bytes.data(), bytes.size(), MSG_DONTWAIT | MSG_NOSIGNAL,
                     reinterpret_cast<const sockaddr*>(&a.addr), a.len);
    return true;
  }
  if (fd_ < 0 || head_.len == 0) return true;
  // A full queue loses this datagram; the protocol sends again.
  return ::send(fd_, bytes.data(), bytes.size(), MSG_DONTWAIT | MSG_NOSIGNAL) >= 0 || errno != ECONNREFUSED;
}

void Udp::send(const Address& to, std::string_view bytes) const {
  if (fd_ < 0 || to.len == 0) return;
  iovec iov{const_cast<char*>(bytes.data()), bytes.size()};
  msghdr m{};
  m.msg_name = const_cast<sockaddr_storage*>(&to.addr);
  m.msg_namelen = to.len;
  m.msg_iov = &iov;
  m.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(in6_pktinfo))] = {};
  // From the address the question came to; the route picks the interface. IPv4 (also to a
  // v4-mapped peer of a dual-stack socket) says so with IP_PKTINFO.
  if (to.local_family == AF_INET) {
    m.msg_control = control;
    m.msg_controllen = CMSG_SPACE(sizeof(in_pktinfo));
    cmsghdr* c = CMSG_FIRSTHDR(&m);
    c->cmsg_level = IPPROTO_IP;
    c->cmsg_type = IP_PKTINFO;
    c->cmsg_len = CMSG_LEN(sizeof(in_pktinfo));
    in_pktinfo info{};
    info.ipi_spec_dst = to.local4;
    std::memcpy(CMSG_DATA(c), &info, sizeof info);
  } else if (to.local_family == AF_INET6) {
    m.msg_control = control;
    m.msg_controllen = CMSG_SPACE(sizeof(in6_pktinfo));
    cmsghdr* c = CMSG_FIRSTHDR(&m);
    c->cmsg_level = IPPROTO_IPV6;
    c->cmsg_type = IPV6_PKTINFO;
    c->cmsg_len = CMSG_LEN(sizeof(in6_pktinfo));
    in6_pktinfo info{};
    info.ipi6_addr = to.local6;
    std::memcpy(CMSG_DATA(c), &info, sizeof info);
  }
  // A full queue or an unreachable peer loses this datagram; the protocol sends again.
  (void)::sendmsg(fd_, &m, MSG_DONTWAIT | MSG_NOSIGNAL);
}

std::optional<std::size_t> Udp::receive(char* buf, std::size_t size, Address& from, bool* refused) const {
  if (fd_ < 0) return std::nullopt;
  for (int errors = 0;;) {
    iovec iov{buf, size};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(in6_pktinfo)) + CMSG_SPACE(sizeof(in_pktinfo)) +
                                  CMSG_SPACE(sizeof(std::uint32_t))];
    msghdr m{};
    m.msg_name = &from.addr;
    m.msg_namelen = sizeof from.addr;
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    m.msg_control = control;
    m.msg_controllen = sizeof control;
    const ssize_t n = ::recvmsg(fd_, &m, MSG_DONTWAIT | MSG_TRUNC);
    if (n < 0) {
      const int e = errno;
      if (e == EINTR) continue;
      if (e == ECONNREFUSED && refused != nullptr) *refused = true;
      // ECONNREFUSED and the like, an ICMP error queued by an earlier send, are read once each:
      // the next datagram may be fine. Anything else ends this read.
      if (++errors < 64 && (e == ECONNREFUSED || e == EHOSTUNREACH || e == ENETUNREACH || e == EHOSTDOWN))
        continue;
      return std::nullopt;
    }
    from.len = m.msg_namelen;
    from.local_family = AF_UNSPEC;
    for (cmsghdr* c = CMSG_FIRSTHDR(&m); c != nullptr; c = CMSG_NXTHDR(&m, c)) {
      if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_RXQ_OVFL) {
        std::memcpy(&dropped_, CMSG_DATA(c), sizeof dropped_);
      } else if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_PKTINFO) {
        in_pktinfo info;
        std::memcpy(&info, CMSG_DATA(c), sizeof info);
        from.local_family = AF_INET;
        from.local4 = info.ipi_spec_dst;  // the local address it was taken on: the one to answer from
      } else if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_PKTINFO &&
                 from.local_family == AF_UNSPEC) {
        in6_pktinfo info;
        std::memcpy(&info, CMSG_DATA(c), sizeof info);
        if (IN6_IS_ADDR_V4MAPPED(&info.ipi6_addr)) {
          from.local_family = AF_INET;
          std::memcpy(&from.local4, &info.ipi6_addr.s6_addr[12], sizeof from.local4);
        } else {
          from.local_family = AF_INET6;
          from.local6 = info.ipi6_addr;
        }
      }
    }
    // A v4-mapped peer of a dual-stack socket answers over IPv4, from an IPv4 address.
    if (from.local_family == AF_INET6 && is_v4_mapped(from.addr)) from.local_family = AF_UNSPEC;
    // MSG_TRUNC: the datagram's real size, so that a longer one is refused, never read cut.
    return static_cast<std::size_t>(n);
  }
}

}  // namespace ddp::net
