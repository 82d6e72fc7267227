#include "store_relay_wire.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <functional>

namespace ddp::detail::relay {
namespace {

// Both ends are on one machine: numbers travel in its own byte order.
template <class T>
void put(std::string& out, T value) {
  char bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));
  out.append(bytes, sizeof(T));
}

void put_field(std::string& out, const void* data, std::size_t size) {
  put(out, static_cast<std::uint32_t>(size));
  out.append(static_cast<const char*>(data), size);
}

void put_values(std::string& out, const std::vector<Bytes>& values) {
  put(out, static_cast<std::uint32_t>(values.size()));
  for (const auto& v : values) put_field(out, v.data(), v.size());
}

class Reader {
 public:
  explicit Reader(std::string_view body) : rest_(body) {}

  template <class T>
  bool get(T& value) {
    if (rest_.size() < sizeof(T)) return false;
    std::memcpy(&value, rest_.data(), sizeof(T));
    rest_.remove_prefix(sizeof(T));
    return true;
  }

  bool field(std::string_view& out) {
    std::uint32_t size = 0;
    if (!get(size) || rest_.size() < size) return false;
    out = rest_.substr(0, size);
    rest_.remove_prefix(size);
    return true;
  }

  // A count of fields, each at least its 4-byte length: a count the rest cannot hold is refused
  // before anything is reserved for it.
  bool count(std::uint32_t& n) { return get(n) && n <= rest_.size() / sizeof(std::uint32_t); }

  bool values(std::vector<Bytes>& out) {
    std::uint32_t n = 0;
    if (!count(n)) return false;
    out.reserve(n);
    for (std::uint32_t i = 0; i < n; ++i) {
      std::string_view v;
      if (!field(v)) return false;
      out.emplace_back(v.begin(), v.end());
    }
    return true;
  }

  bool done() const { return rest_.empty(); }

 private:
  std::string_view rest_;
};

sockaddr_un address_of(const std::string& name, socklen_t& length) {
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  // The abstract namespace: a leading NUL, then the name (cut to fit; socket_name keeps it short).
  const std::size_t n = std::min(name.size(), sizeof(a.sun_path) - 1);
  std::memcpy(a.sun_path + 1, name.data(), n);
  length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + n);
  return a;
}

int milliseconds_until(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::clamp<long long>(left, 0, 60'000));
}

// Waits until `fd` is ready for `events`, or the deadline (none: no end) passes.
bool ready(int fd, short events, std::optional<Clock::time_point> deadline) {
  for (;;) {
    const int wait_ms = deadline ? milliseconds_until(*deadline) : -1;
    pollfd p{fd, events, 0};
    const int n = poll(&p, 1, wait_ms);
    if (n > 0) return true;
    if (n < 0 && errno != EINTR) return false;
    if (n == 0 && deadline && Clock::now() >= *deadline) return false;
  }
}

// Reads what is there before it waits: a frame is written whole, so most reads need no wait.
bool read_exactly(int fd, char* out, std::size_t size, std::optional<Clock::time_point> deadline,
                  std::string& why) {
  std::size_t got = 0;
  while (got < size) {
    const ssize_t n = recv(fd, out + got, size - got, MSG_DONTWAIT);
    if (n > 0) {
      got += static_cast<std::size_t>(n);
      continue;
    }
    if (n == 0) {
      why = "the other end closed the connection";
      return false;
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      why = std::strerror(errno);
      return false;
    }
    if (!ready(fd, POLLIN, deadline)) {
      why = "no answer in time";
      return false;
    }
  }
  return true;
}

}  // namespace

std::string encode(const Request& request) {
  std::string out;
  put(out, static_cast<std::uint8_t>(request.op));
  put(out, request.number);
  put(out, static_cast<std::uint32_t>(request.keys.size()));
  for (const auto& k : request.keys) put_field(out, k.data(), k.size());
  put_values(out, request.values);
  return out;
}

std::string encode(const Reply& reply) {
  std::string out;
  put(out, static_cast<std::uint8_t>(reply.ok ? 1 : 0));
  put(out, reply.number);
  put_values(out, reply.values);
  return out;
}

std::optional<Request> decode_request(std::string_view body) {
  Reader in(body);
  Request r;
  std::uint8_t op = 0;
  std::uint32_t keys = 0;
  if (!in.get(op) || op < static_cast<std::uint8_t>(Op::Set) || op > static_cast<std::uint8_t>(Op::NumKeys))
    return std::nullopt;
  r.op = static_cast<Op>(op);
  if (!in.get(r.number) || !in.count(keys)) return std::nullopt;
  r.keys.reserve(keys);
  for (std::uint32_t i = 0; i < keys; ++i) {
    std::string_view k;
    if (!in.field(k)) return std::nullopt;
    r.keys.emplace_back(k);
  }
  if (!in.values(r.values) || !in.done()) return std::nullopt;
  return r;
}

std::optional<Reply> decode_reply(std::string_view body) {
  Reader in(body);
  Reply r;
  std::uint8_t ok = 0;
  if (!in.get(ok) || ok > 1 || !in.get(r.number) || !in.values(r.values) || !in.done()) return std::nullopt;
  r.ok = ok == 1;
  return r;
}

std::string socket_name(const std::string& master_addr, std::uint16_t master_port, int node_rank) {
  const std::string tail = ":" + std::to_string(master_port) + "/node" + std::to_string(node_rank);
  std::string name = "slurm-ddp/store-relay/" + master_addr + tail;
  // sun_path holds 107 bytes after the leading NUL; a long host name is replaced by its hash.
  if (name.size() > 100)
    name = "slurm-ddp/store-relay/" + std::to_string(std::hash<std::string>{}(master_addr)) + tail;
  return name;
}

namespace {

// A Unix stream socket bound and listening under `name`, or connected to it; -1 with errno set.
int socket_at(const std::string& name, bool listening) {
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  socklen_t length = 0;
  const sockaddr_un a = address_of(name, length);
  const auto* at = reinterpret_cast<const sockaddr*>(&a);
  const bool ok = listening ? bind(fd, at, length) == 0 && listen(fd, 64) == 0 : connect(fd, at, length) == 0;
  if (!ok) {
    const int saved = errno;
    close(fd);
    errno = saved;
    return -1;
  }
  return fd;
}

}  // namespace

int listen_on(const std::string& name) { return socket_at(name, true); }

bool name_in_use(const std::string& name) {
  const int fd = socket_at(name, false);
  if (fd < 0) return false;
  close(fd);
  return true;
}

int connect_to(const std::string& name) { return socket_at(name, false); }

bool peer_is_same_user(int fd) {
  ucred peer{};
  socklen_t length = sizeof peer;
  return getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &length) == 0 && peer.uid == geteuid();
}

bool write_frame(int fd, const std::string& body, Clock::time_point deadline, std::string& why) {
  std::string frame;
  put(frame, static_cast<std::uint32_t>(body.size()));
  frame += body;
  std::size_t sent = 0;
  // Sends what the socket takes before it waits: a frame usually fits at once.
  while (sent < frame.size()) {
    const ssize_t n = send(fd, frame.data() + sent, frame.size() - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n >= 0) {
      sent += static_cast<std::size_t>(n);
      continue;
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      why = errno == EPIPE || errno == ECONNRESET ? "the other end closed the connection" : std::strerror(errno);
      return false;
    }
    if (!ready(fd, POLLOUT, deadline)) {
      why = "the other end took nothing in time";
      return false;
    }
  }
  return true;
}

bool read_frame(int fd, std::string& body, std::optional<Clock::time_point> deadline,
                Clock::duration body_within, std::string& why) {
  if (!ready(fd, POLLIN, deadline)) {
    why = "no answer in time";
    return false;
  }
  // Once a frame began, the rest of it is due soon, whatever the wait for its first byte.
  const auto rest_by = Clock::now() + body_within;
  const auto by = deadline ? std::min(*deadline + body_within, rest_by) : rest_by;
  std::uint32_t size = 0;
  char head[sizeof size];
  if (!read_exactly(fd, head, sizeof size, by, why)) return false;
  std::memcpy(&size, head, sizeof size);
  if (size > kMaxFrame) {
    why = "a message of " + std::to_string(size) + " bytes, more than a store value may be";
    return false;
  }
  body.assign(size, '\0');
  return read_exactly(fd, body.data(), size, by, why);
}

}  // namespace ddp::detail::relay
