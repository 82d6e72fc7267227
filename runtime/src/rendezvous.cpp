#include "rendezvous.hpp"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include <future>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include "torch_compat.hpp"
#include "ddp/error.hpp"
#include "local_host.hpp"

namespace ddp::detail {
namespace {

using namespace std::chrono_literals;

std::string where(const Context& c) {
  return c.master_addr + ":" + std::to_string(c.master_port);
}

std::string this_host(const Context& c) {
  if (c.hostname_hint) return *c.hostname_hint;
  return plan::local_host_name().value_or("this node");
}

// What a rank that reached MASTER_PORT but never heard a rendezvous store there is told.
Error no_answer(const Context& c, const std::string& host, std::chrono::milliseconds timeout,
                const std::string& detail) {
  return Error("rank " + std::to_string(c.rank) + " on " + host + " reached " + where(c) +
               " (MASTER_ADDR:MASTER_PORT) but got no rendezvous answer within " +
               seconds_text(timeout) + " s (" + detail +
               "). Another program may hold that port (rank 0's own error then says it is in use: "
               "choose another with --ddp-port or MASTER_PORT), or rank 0 stopped");
}

// Whether something accepts connections at MASTER_ADDR:MASTER_PORT now (within a second).
bool someone_listens(const Context& c) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(c.master_addr.c_str(), std::to_string(c.master_port).c_str(), &hints, &found) != 0)
    return false;
  bool listens = false;
  for (addrinfo* a = found; a != nullptr && !listens; a = a->ai_next) {
    const int fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
      listens = true;
    } else if (errno == EINPROGRESS) {
      pollfd p{fd, POLLOUT, 0};
      int error = 0;
      socklen_t len = sizeof error;
      listens = poll(&p, 1, 1000) == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &len) == 0 &&
                error == 0;
    }
    close(fd);
  }
  freeaddrinfo(found);
  return listens;
}

// A client's TCPStore constructor waits for the server's first answer (LibTorch 2.x pings it)
// with no receive time-out: facing another program that holds MASTER_PORT and never answers, it
// never returns. So it runs on a thread of its own, awaited for the rendezvous time-out (a thread
// still stuck then is left blocked on its socket). Then, if something listens on the port, that
// is the silent program; if nothing does, rank 0's store never came up there (LibTorch's own
// connect attempts would end later: it retries once past the time-out).
c10::intrusive_ptr<c10d::Store> connect_client(const Context& c, const c10d::TCPStoreOptions& options,
                                               std::chrono::milliseconds timeout) {
  using Result = std::promise<c10::intrusive_ptr<c10d::Store>>;
  auto result = std::make_shared<Result>();
  auto future = result->get_future();
  std::thread([result, host = c.master_addr, options] {
    try {
      result->set_value(compat::make_tcp_store(host, options));
    } catch (...) {
      result->set_exception(std::current_exception());
    }
  }).detach();
  if (future.wait_for(timeout + std::chrono::seconds(1)) == std::future_status::timeout) {
    if (someone_listens(c))
      throw no_answer(c, this_host(c), timeout, "the store's first answer never came");
    throw std::runtime_error("nothing accepted a connection there");  // connect() says where
  }
  return future.get();
}

c10::intrusive_ptr<c10d::Store> connect(const Context& c, std::chrono::milliseconds timeout) {
  c10d::TCPStoreOptions options;
  options.port = c.master_port;
  options.isServer = c.rank == 0;
  options.numWorkers = static_cast<std::size_t>(c.world_size);
  options.waitWorkers = false;  // the arrival check below waits, and can say who is missing
  options.timeout = timeout;
  try {
    if (c.rank == 0) return compat::make_tcp_store(c.master_addr, options);
    return connect_client(c, options, timeout);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    std::ostringstream msg;
    if (c.rank == 0)
      msg << "rank 0 could not open the rendezvous on port " << c.master_port
          << " (MASTER_PORT) on " << this_host(c) << ": " << compat::message_of(e)
          << ". If the port is in use by another process, choose another one (--ddp-port, or "
             "MASTER_PORT)";
    else
      msg << "rank " << c.rank << " on " << this_host(c) << " could not reach the rendezvous at "
          << where(c) << " (MASTER_ADDR:MASTER_PORT) within " << seconds_text(timeout)
          << " s: " << compat::message_of(e) << ". Check that rank 0 started, and that MASTER_ADDR resolves "
          << "to an address this node can reach";
    throw Error(msg.str());
  }
}

// Who is missing, and where the others are, for the time-out message.
std::string missing_report(c10d::Store& store, const Context& c, std::chrono::milliseconds timeout) {
  std::ostringstream missing, arrived;
  for (int r = 0; r < c.world_size; ++r) {
    if (store.check({arrival_key(r)})) {
      const auto h = store.get(arrival_key(r));
      arrived << (arrived.tellp() > 0 ? ", " : "") << r << " on " << std::string(h.begin(), h.end());
    } else {
      missing << (missing.tellp() > 0 ? ", " : "") << r;
    }
  }
  return "rank(s) " + missing.str() + " of " + std::to_string(c.world_size) +
         " never arrived at the rendezvous " + where(c) + " within " + seconds_text(timeout) +
         " s (arrived: " + arrived.str() +
         "). Check that every task started, and the job's output of the missing ones";
}

}  // namespace

std::string seconds_text(std::chrono::milliseconds d) {
  std::ostringstream s;
  s << static_cast<double>(d.count()) / 1000.0;
  return s.str();
}

std::string arrival_key(int rank) { return "ddp/arrived/" + std::to_string(rank); }

c10::intrusive_ptr<c10d::Store> rendezvous(const Context& c, std::chrono::milliseconds timeout) {
  auto store = connect(c, timeout);
  // Rank 0 serves the store and decides the time-out; the others wait a little longer so that
  // they hear its verdict (which ranks are missing) instead of only seeing the store vanish.
  constexpr auto kGrace = std::chrono::seconds(3);
  const auto deadline = std::chrono::steady_clock::now() + timeout + (c.rank == 0 ? 0s : kGrace);
  const std::string host = this_host(c);
  try {
    store->set(arrival_key(c.rank), std::vector<std::uint8_t>(host.begin(), host.end()));
    // The server's first answer: it proves that a rendezvous store, not some other program,
    // listens on MASTER_PORT, and (LibTorch 1.13) arms the connection's receive time-out, without
    // which the add() below would wait forever on a listener that never answers.
    store->wait({arrival_key(c.rank)}, timeout);
  } catch (const std::exception& e) {
    throw no_answer(c, host, timeout, compat::message_of(e));
  }
  try {
    store->add("ddp/arrivals", 1);
    while (store->add("ddp/arrivals", 0) < c.world_size) {
      if (c.rank != 0 && store->check({"ddp/failed"})) {
        // Read before acknowledging: rank 0 stops serving once every rank has acknowledged.
        const auto m = store->get("ddp/failed");
        store->add("ddp/acks", 1);
        throw Error(std::string(m.begin(), m.end()));
      }
      if (std::chrono::steady_clock::now() >= deadline) {
        const std::string report = missing_report(*store, c, timeout);
        if (c.rank == 0) {
          store->set("ddp/failed", std::vector<std::uint8_t>(report.begin(), report.end()));
          // Keep serving until every rank that arrived has read the verdict (or the grace ends).
          const auto arrived = store->add("ddp/arrivals", 0);
          const auto until = std::chrono::steady_clock::now() + kGrace;
          while (store->add("ddp/acks", 0) < arrived - 1 && std::chrono::steady_clock::now() < until)
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        throw Error(report);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Error("lost the rendezvous at " + where(c) + " while waiting for the other ranks: " +
                compat::message_of(e) + ". Rank 0 (which serves it) probably ended");
  }
  return store;
}

}  // namespace ddp::detail
