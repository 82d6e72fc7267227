#include "store_wedge.hpp"

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace ddp::detail {
namespace {

// "45 0x7 0x7ffd..." from /proc/self/task/TID/syscall: the call a sleeping thread is in, and its
// first argument (the descriptor for recvfrom). "running" or a fault: nothing.
bool in_recvfrom(pid_t tid, int& fd) {
  std::ifstream in("/proc/self/task/" + std::to_string(tid) + "/syscall");
  long nr = -1;
  std::string arg0;
  if (!(in >> nr >> arg0) || nr != SYS_recvfrom) return false;
  fd = static_cast<int>(std::strtol(arg0.c_str(), nullptr, 16));
  return fd >= 0;
}

std::uint64_t context_switches(pid_t tid) {
  std::ifstream in("/proc/self/task/" + std::to_string(tid) + "/status");
  std::uint64_t total = 0;
  for (std::string line; std::getline(in, line);)
    if (line.find("ctxt_switches:") != std::string::npos)
      total += std::strtoull(line.substr(line.find(':') + 1).c_str(), nullptr, 10);
  return total;
}

int port_of(const sockaddr_storage& a) {
  if (a.ss_family == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in&>(a).sin_port);
  if (a.ss_family == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6&>(a).sin6_port);
  return -1;
}

std::string text_of(const sockaddr_storage& a) {
  char host[INET6_ADDRSTRLEN] = "?";
  if (a.ss_family == AF_INET)
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in&>(a).sin_addr, host, sizeof host);
  else if (a.ss_family == AF_INET6)
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6&>(a).sin6_addr, host, sizeof host);
  return std::string(host) + ":" + std::to_string(port_of(a));
}

}  // namespace

std::vector<StoreRead> store_reads(int port) {
  std::vector<StoreRead> reads;
  DIR* dir = opendir("/proc/self/task");
  if (dir == nullptr) return reads;
  while (const dirent* e = readdir(dir)) {
    const pid_t tid = static_cast<pid_t>(std::strtol(e->d_name, nullptr, 10));
    int fd = -1;
    if (tid <= 0 || !in_recvfrom(tid, fd)) continue;
    sockaddr_storage local{}, peer{};
    socklen_t local_len = sizeof local, peer_len = sizeof peer;
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&local), &local_len) != 0 ||
        port_of(local) != port ||
        getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &peer_len) != 0)
      continue;
    reads.push_back({tid, fd, context_switches(tid), text_of(peer)});
  }
  closedir(dir);
  return reads;
}

std::vector<StoreRead> stuck_reads(const std::vector<StoreRead>& before,
                                   const std::vector<StoreRead>& now) {
  std::vector<StoreRead> stuck;
  for (const auto& n : now)
    for (const auto& b : before)
      if (n.thread == b.thread && n.fd == b.fd && n.switches == b.switches && n.peer == b.peer)
        stuck.push_back(n);
  return stuck;
}

bool drop_connection(const StoreRead& read) {
  // The same connection still, not a descriptor closed and reused since the scan.
  sockaddr_storage peer{};
  socklen_t peer_len = sizeof peer;
  if (getpeername(read.fd, reinterpret_cast<sockaddr*>(&peer), &peer_len) != 0 ||
      text_of(peer) != read.peer)
    return false;
  return shutdown(read.fd, SHUT_RDWR) == 0;
}

}  // namespace ddp::detail
