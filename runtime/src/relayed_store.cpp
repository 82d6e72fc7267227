#include "relayed_store.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include <c10/util/Exception.h>

#include "ddp/error.hpp"

namespace ddp::detail {

using relay::Bytes;
using relay::Clock;
using relay::Op;
using relay::Reply;
using relay::Request;

namespace {

// Beyond the store's own time-out, how long the leader may take to pass an answer on.
constexpr auto kRelaySlack = std::chrono::seconds(30);
constexpr auto kListenPoll = std::chrono::milliseconds(20);

Request request(Op op, std::vector<std::string> keys, std::vector<Bytes> values = {}, std::int64_t number = 0) {
  Request r;
  r.op = op;
  r.keys = std::move(keys);
  r.values = std::move(values);
  r.number = number;
  return r;
}

}  // namespace

c10::intrusive_ptr<RelayedStore> RelayedStore::connect(const std::string& name, const std::string& leader,
                                                       std::chrono::milliseconds timeout,
                                                       Clock::time_point deadline) {
  for (;;) {
    const int fd = relay::connect_to(name);
    if (fd >= 0) {
      if (!relay::peer_is_same_user(fd)) {
        close(fd);
        throw Error("the store relay's name on this node (@" + name + ") is held by another user's program, "
                    "not by " + leader + "; unset DDP_STORE_RELAY to reach rank 0's store directly");
      }
      return c10::make_intrusive<RelayedStore>(fd, name, leader, timeout);
    }
    // Nobody listens yet (the leader is still starting): ECONNREFUSED for an abstract name.
    if ((errno != ECONNREFUSED && errno != ENOENT && errno != EAGAIN) || Clock::now() >= deadline)
      throw Error(leader + ", which relays the rendezvous store for this node's ranks (DDP_STORE_RELAY), "
                  "did not open its relay (@" + name + ") in time: " + std::strerror(errno) +
                  ". It ended before the rendezvous or hangs (its own output says why)");
    std::this_thread::sleep_for(kListenPoll);
  }
}

RelayedStore::RelayedStore(int fd, std::string name, std::string leader, std::chrono::milliseconds timeout)
    : c10d::Store(timeout), fd_(fd), name_(std::move(name)), leader_(std::move(leader)) {}

RelayedStore::~RelayedStore() { close(fd_); }

Reply RelayedStore::call(const Request& r, std::chrono::milliseconds answer_within) {
  std::lock_guard<std::mutex> hold(mu_);
  const auto deadline = Clock::now() + answer_within + kRelaySlack;
  std::string body, why;
  if (!relay::write_frame(fd_, relay::encode(r), deadline, why) ||
      !relay::read_frame(fd_, body, deadline, kRelaySlack, why))
    throw Error("lost the store relay of " + leader_ + " (" + why + "): it ended or hangs (its own output says why)");
  auto reply = relay::decode_reply(body);
  if (!reply) throw Error("the store relay of " + leader_ + " sent a malformed answer");
  if (!reply->ok) {
    const Bytes& text = reply->values.empty() ? Bytes{} : reply->values.front();
    TORCH_CHECK(false, std::string(text.begin(), text.end()));
  }
  return std::move(*reply);
}

void RelayedStore::set(const std::string& key, const std::vector<std::uint8_t>& value) {
  call(request(Op::Set, {key}, {value}), timeout_);
}

std::vector<std::uint8_t> RelayedStore::compareSet(const std::string& key, const std::vector<std::uint8_t>& expected,
                                                   const std::vector<std::uint8_t>& desired) {
  auto reply = call(request(Op::CompareSet, {key}, {expected, desired}), timeout_);
  return reply.values.empty() ? Bytes{} : std::move(reply.values.front());
}

std::vector<std::uint8_t> RelayedStore::get(const std::string& key) {
  auto reply = call(request(Op::Get, {key}, {}, timeout_.count()), timeout_);
  return reply.values.empty() ? Bytes{} : std::move(reply.values.front());
}

std::int64_t RelayedStore::add(const std::string& key, std::int64_t value) {
  return call(request(Op::Add, {key}, {}, value), timeout_).number;
}

bool RelayedStore::deleteKey(const std::string& key) {
  return call(request(Op::DeleteKey, {key}), timeout_).number != 0;
}

bool RelayedStore::check(const std::vector<std::string>& keys) {
  return call(request(Op::Check, keys), timeout_).number != 0;
}

std::int64_t RelayedStore::getNumKeys() { return call(request(Op::NumKeys, {}), timeout_).number; }

void RelayedStore::wait(const std::vector<std::string>& keys) { wait(keys, timeout_); }

void RelayedStore::wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) {
  call(request(Op::Wait, keys, {}, timeout.count()), timeout);
}

c10::intrusive_ptr<c10d::Store> RelayedStore::clone() {
  return connect(name_, leader_, timeout_, Clock::now() + timeout_);
}

}  // namespace ddp::detail
