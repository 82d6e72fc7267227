#include "store_relay.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include "ddp/error.hpp"
#include "store_relay_wire.hpp"
#include "torch_compat.hpp"

namespace ddp::detail {

using relay::Clock;
using relay::Op;
using relay::Reply;
using relay::Request;

namespace {

// A frame once begun must end within this; a local rank writes it whole or has died.
constexpr auto kFrameWithin = std::chrono::seconds(30);
// More connections than any node has ranks (each rank holds one, a clone() one more) means a
// program gone wrong; it is refused rather than given a thread each.
constexpr std::size_t kMaxConnections = 1024;
// How long the relay's end waits for its threads to leave before it leaves them to the process.
constexpr auto kLeaveWithin = std::chrono::seconds(2);

// A wait that ended this close to its deadline ran out of time (rather than failed).
constexpr auto kTimedOutWithin = std::chrono::milliseconds(50);

}  // namespace

struct StoreRelay::State {
  // One wait at rank 0 for a set of keys, shared by the ranks that ask for the same keys while it
  // lasts; a rank that may wait longer than its first asker asks again when it ran out.
  struct SharedWait {
    bool done = false;
    bool timed_out = false;
    std::string error;  // empty: every key was set
    std::optional<relay::Bytes> value;  // the key's value, read once for every Get that shared it
  };

  Connect connect;
  int listener = -1;
  std::thread acceptor;

  std::mutex mu;  // guards everything below but the command connection
  std::condition_variable changed;
  bool stopping = false;
  std::vector<int> connections;
  int threads = 0;
  Clock::time_point last_answer = Clock::now();
  std::optional<std::string> answer_with;  // every request's answer, once set
  // Why rank 0 could not be reached, believed for as long as finding it out took: a leader's
  // connection fails only once its tries spent the rendezvous time-out, and the node's requests
  // queued behind it hear the same at once instead of each trying as long again in turn; a
  // failure found at once is tried again at once.
  std::exception_ptr unreachable;
  Clock::time_point unreachable_until;
  std::vector<c10::intrusive_ptr<c10d::Store>> idle_waiters;
  std::map<std::string, std::shared_ptr<SharedWait>> waits;  // by the keys, joined

  // The connection for every request rank 0 answers at once; one request at a time on it.
  std::mutex command_mu;
  c10::intrusive_ptr<c10d::Store> command;

  // Cleared once the leader's rendezvous failed or the relay ends: rank 0 may close its store at
  // any moment then, and no connection to it is kept beyond the request it served (see
  // let_go_of_idle_connections).
  std::atomic<bool> keep_connections{true};

  // A request that failed may leave an answer due on the connection (LibTorch 1.13 answers a
  // timed-out wait later), which the next request would read as its own: the next one gets a
  // new connection.
  template <class Call>
  auto on_command(Call call) -> decltype(call(std::declval<c10d::Store&>())) {
    std::lock_guard<std::mutex> hold(command_mu);
    if (!command) command = reach_rank0();
    try {
      struct CloseUnlessKept {
        State& s;
        ~CloseUnlessKept() {
          if (!s.keep_connections) s.command.reset();
        }
      } after{*this};
      return call(*command);
    } catch (...) {
      command.reset();
      throw;
    }
  }

  c10::intrusive_ptr<c10d::Store> reach_rank0() {
    {
      std::lock_guard<std::mutex> hold(mu);
      if (unreachable && Clock::now() < unreachable_until) std::rethrow_exception(unreachable);
    }
    const auto began = Clock::now();
    try {
      return connect();
    } catch (...) {
      const auto failed = Clock::now();
      std::lock_guard<std::mutex> hold(mu);
      unreachable = std::current_exception();
      unreachable_until = failed + (failed - began);
      throw;
    }
  }

  // Closes the connections to rank 0 that no request holds now, and each one in use after its
  // request, so that none is open when rank 0 closes its store after a failed rendezvous:
  // LibTorch 1.13's client spins a thread at full speed from its server's close until the client
  // is destroyed (its callback thread peeks a socket at end of file and polls again), and
  // thousands of simulated ranks' leaders on 2 cores, closing theirs only once idle, livelocked
  // on it. The node's acknowledgements after a failure then each make a connection of their own.
  void let_go_of_idle_connections() {
    keep_connections = false;
    std::vector<c10::intrusive_ptr<c10d::Store>> idle;
    {
      std::lock_guard<std::mutex> hold(mu);
      idle.swap(idle_waiters);
    }
    c10::intrusive_ptr<c10d::Store> closing;
    {
      std::unique_lock<std::mutex> hold(command_mu, std::try_to_lock);
      if (!hold.owns_lock()) return;
      closing = std::move(command);
    }
    // Closed here, outside the lock: a 1.13 client joins its thread.
  }
};

namespace {

Reply failure(const std::string& message, std::int64_t kind = 0) {
  Reply r;
  r.ok = false;
  r.number = kind;
  r.values.emplace_back(message.begin(), message.end());
  return r;
}

std::chrono::milliseconds wait_limit(std::int64_t ms) { return relay::bounded(std::chrono::milliseconds(ms)); }

std::string joined(const std::vector<std::string>& keys) {
  std::string id;
  for (const auto& k : keys) {
    id += k;
    id += '\0';
  }
  return id;
}

// Returns once every key is set, through a wait at rank 0 that ranks asking for the same keys
// share; throws when `timeout` passes first or the wait fails. A rank joins a wait under way
// without asking rank 0 anything. With `read`, returns the key's value too: read once after the
// wait for every rank that shared it (each joined before that read and hears after it), or
// nullopt when this rank must read it itself.
std::optional<relay::Bytes> wait_for(StoreRelay::State& s, const std::vector<std::string>& keys,
                                     std::chrono::milliseconds timeout, bool read) {
  const auto deadline = Clock::now() + timeout;
  const std::string id = joined(keys);
  const auto keys_set = [&] { return s.on_command([&](c10d::Store& store) { return store.check(keys); }); };
  for (;;) {
    std::unique_lock<std::mutex> lock(s.mu);
    if (const auto it = s.waits.find(id); it != s.waits.end()) {
      const auto shared = it->second;
      if (!s.changed.wait_until(lock, deadline, [&] { return shared->done; }))
        throw std::runtime_error("the keys were not set within " + std::to_string(timeout.count()) + " ms");
      if (shared->error.empty()) return read ? shared->value : std::nullopt;
      // Its wait ended before this one's: ask again for the time left.
      if (shared->timed_out && Clock::now() < deadline) continue;
      // Its wait failed (its connection to rank 0 did): the keys may be set all the same.
      lock.unlock();
      bool set = false;
      try {
        set = keys_set();
      } catch (const std::exception&) {
      }
      if (set) return std::nullopt;
      throw std::runtime_error(shared->error);
    }
    lock.unlock();
    if (keys_set()) return std::nullopt;
    lock.lock();
    // Another rank began that wait meanwhile: join it.
    if (s.waits.count(id)) continue;
    const auto mine = std::make_shared<StoreRelay::State::SharedWait>();
    s.waits[id] = mine;
    c10::intrusive_ptr<c10d::Store> waiter;
    if (!s.idle_waiters.empty()) {
      waiter = s.idle_waiters.back();
      s.idle_waiters.pop_back();
    }
    lock.unlock();
    std::string error;
    try {
      if (!waiter) waiter = s.reach_rank0();
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      waiter->wait(keys, std::max(left, std::chrono::milliseconds(1)));
    } catch (const std::exception& e) {
      error = compat::message_of(e);
      // LibTorch 1.13's server keeps a wait that timed out and may answer it later, on this
      // connection: that byte would be read as the answer to its next request.
      waiter.reset();
    }
    // Closed before the read: a rank that asks after it reads for itself.
    lock.lock();
    s.waits.erase(id);
    lock.unlock();
    std::optional<relay::Bytes> value;
    if (error.empty() && read) {
      try {
        value = s.on_command([&](c10d::Store& store) { return store.get(keys[0]); });
      } catch (const std::exception&) {
        // The ranks that shared the wait read it themselves, and hear why that fails.
      }
    }
    lock.lock();
    mine->done = true;
    mine->error = error;
    mine->timed_out = !error.empty() && Clock::now() >= deadline - kTimedOutWithin;
    mine->value = value;
    if (waiter && s.keep_connections) s.idle_waiters.push_back(waiter);
    s.changed.notify_all();
    lock.unlock();
    if (!error.empty()) throw std::runtime_error(error);
    return value;
  }
}

Reply answer(StoreRelay::State& s, const Request& r) {
  {
    std::lock_guard<std::mutex> hold(s.mu);
    if (s.answer_with) return failure(*s.answer_with, relay::kOwnWords);
  }
  const auto shape = [&](std::size_t keys, std::size_t values) {
    return r.keys.size() == keys && r.values.size() == values;
  };
  Reply out;
  try {
    switch (r.op) {
      case Op::Set:
        if (!shape(1, 1)) break;
        s.on_command([&](c10d::Store& store) { store.set(r.keys[0], r.values[0]); });
        return out;
      case Op::CompareSet:
        if (!shape(1, 2)) break;
        out.values.push_back(s.on_command(
            [&](c10d::Store& store) { return store.compareSet(r.keys[0], r.values[0], r.values[1]); }));
        return out;
      case Op::Get:
        if (!shape(1, 0)) break;
        if (auto value = wait_for(s, r.keys, wait_limit(r.number), /*read=*/true))
          out.values.push_back(std::move(*value));
        else
          out.values.push_back(s.on_command([&](c10d::Store& store) { return store.get(r.keys[0]); }));
        return out;
      case Op::Add:
        if (!shape(1, 0)) break;
        out.number = s.on_command([&](c10d::Store& store) { return store.add(r.keys[0], r.number); });
        return out;
      case Op::Check:
        if (!shape(r.keys.size(), 0)) break;
        out.number = s.on_command([&](c10d::Store& store) { return store.check(r.keys); }) ? 1 : 0;
        return out;
      case Op::Wait:
        if (r.keys.empty() || !shape(r.keys.size(), 0)) break;
        wait_for(s, r.keys, wait_limit(r.number), /*read=*/false);
        return out;
      case Op::DeleteKey:
        if (!shape(1, 0)) break;
        out.number = s.on_command([&](c10d::Store& store) { return store.deleteKey(r.keys[0]); }) ? 1 : 0;
        return out;
      case Op::NumKeys:
        if (!shape(0, 0)) break;
        out.number = s.on_command([&](c10d::Store& store) { return store.getNumKeys(); });
        return out;
    }
  } catch (const Error& e) {
    return failure(e.what(), relay::kOwnWords);
  } catch (const std::exception& e) {
    return failure(compat::message_of(e));
  }
  return failure("a request of the wrong shape");
}

void serve(const std::shared_ptr<StoreRelay::State>& s, int fd) {
  try {
    std::string body, why;
    while (relay::read_frame(fd, body, std::nullopt, kFrameWithin, why)) {
      const auto request = relay::decode_request(body);
      const Reply reply = request ? answer(*s, *request) : failure("a malformed request");
      if (!relay::write_frame(fd, relay::encode(reply), Clock::now() + kFrameWithin, why) || !request) break;
      std::lock_guard<std::mutex> hold(s->mu);
      s->last_answer = Clock::now();
    }
  } catch (const std::exception&) {
    // Out of memory for a frame: this rank's connection ends (it then asks rank 0 directly).
  }
  std::lock_guard<std::mutex> hold(s->mu);
  s->connections.erase(std::remove(s->connections.begin(), s->connections.end(), fd), s->connections.end());
  close(fd);
  --s->threads;
  s->changed.notify_all();
}

void accept_ranks(const std::shared_ptr<StoreRelay::State>& s) {
  for (;;) {
    const int fd = accept4(s->listener, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      // Out of descriptors or memory for now: a rank that waits is served once there are.
      if (errno == EMFILE || errno == ENFILE || errno == ENOMEM || errno == ENOBUFS) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        continue;
      }
      return;  // shut down by the destructor
    }
    std::lock_guard<std::mutex> hold(s->mu);
    // Only this user's ranks: another user's program could read and set the step's keys.
    if (s->stopping || !relay::peer_is_same_user(fd) || s->connections.size() >= kMaxConnections) {
      close(fd);
      continue;
    }
    try {
      s->connections.push_back(fd);
      std::thread([s, fd] { serve(s, fd); }).detach();
      ++s->threads;
    } catch (const std::exception&) {
      // No thread to serve it: the rank finds its connection closed and asks rank 0 directly.
      s->connections.erase(std::remove(s->connections.begin(), s->connections.end(), fd), s->connections.end());
      close(fd);
    }
  }
}

}  // namespace

StoreRelay::StoreRelay(std::shared_ptr<State> state) : state_(std::move(state)) {}

std::unique_ptr<StoreRelay> StoreRelay::listen(const std::string& name, Connect connect) {
  auto s = std::make_shared<State>();
  s->connect = std::move(connect);
  s->listener = relay::listen_on(name);
  if (s->listener < 0) {
    const int e = errno;
    throw Error("this node's leader could not open the store relay (DDP_STORE_RELAY) under the name @" + name +
                ": " + std::strerror(e) +
                (e == EADDRINUSE ? " (another program holds that name: a rank of another step with the same "
                                   "MASTER_ADDR:MASTER_PORT, or another user's); choose another port with "
                                   "--ddp-port or MASTER_PORT, or set DDP_STORE_RELAY=0"
                                 : std::string()));
  }
  s->acceptor = std::thread([s] { accept_ranks(s); });
  return std::unique_ptr<StoreRelay>(new StoreRelay(std::move(s)));
}

void StoreRelay::answer_with(const std::string& words) {
  std::lock_guard<std::mutex> hold(state_->mu);
  state_->answer_with = words;
}

void StoreRelay::linger(std::chrono::milliseconds idle, std::chrono::milliseconds at_most) {
  auto& s = *state_;
  s.let_go_of_idle_connections();
  const auto start = Clock::now();
  const auto until = start + at_most;
  std::unique_lock<std::mutex> lock(s.mu);
  while (!s.connections.empty() && Clock::now() < until && Clock::now() - std::max(s.last_answer, start) < idle)
    s.changed.wait_for(lock, std::chrono::milliseconds(50));
}

StoreRelay::~StoreRelay() {
  auto& s = *state_;
  s.let_go_of_idle_connections();
  {
    std::lock_guard<std::mutex> hold(s.mu);
    s.stopping = true;
    for (const int fd : s.connections) shutdown(fd, SHUT_RDWR);
  }
  shutdown(s.listener, SHUT_RDWR);
  s.acceptor.join();
  close(s.listener);
  // A thread still waiting at rank 0 for a rank that left holds the state until its wait ends.
  std::unique_lock<std::mutex> lock(s.mu);
  s.changed.wait_for(lock, kLeaveWithin, [&] { return s.threads == 0; });
}

}  // namespace ddp::detail
