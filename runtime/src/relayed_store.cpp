#include "relayed_store.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>
#include <utility>

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

c10::intrusive_ptr<c10d::Store> RelayedStore::connect(const std::string& name, const std::string& leader,
                                                      std::chrono::milliseconds timeout,
                                                      Clock::time_point deadline, Direct direct) {
  for (;;) {
    const int fd = relay::connect_to(name);
    if (fd >= 0) {
      if (relay::peer_is_same_user(fd)) return c10::make_intrusive<RelayedStore>(fd, name, leader, timeout, direct);
      close(fd);
      const std::string taken = "the store relay's name on this node (@" + name +
                                ") is held by another user's program, not by " + leader;
      if (!direct) throw Error(taken + "; set DDP_STORE_RELAY=0 to reach rank 0's store directly");
      // The leader, whose name it is, says so once for the node (rendezvous.cpp).
      return direct();
    }
    // Nobody listens yet (the leader is still starting): ECONNREFUSED for an abstract name.
    const int error = errno;
    if ((error != ECONNREFUSED && error != ENOENT && error != EAGAIN) || Clock::now() >= deadline) {
      if (direct) return direct();
      throw Error(leader + ", which relays the rendezvous store for this node's ranks (DDP_STORE_RELAY), "
                  "did not open its relay (@" + name + ") in time: " + std::strerror(error) +
                  ". It ended before the rendezvous or hangs (its own output says why)");
    }
    std::this_thread::sleep_for(kListenPoll);
  }
}

RelayedStore::RelayedStore(int fd, std::string name, std::string leader, std::chrono::milliseconds timeout,
                           Direct direct)
    : c10d::Store(timeout), fd_(fd), name_(std::move(name)), leader_(std::move(leader)), direct_(std::move(direct)) {}

RelayedStore::~RelayedStore() { close(fd_); }

std::optional<Reply> RelayedStore::call(const Request& r, std::chrono::milliseconds answer_within,
                                        bool ask_again_if_lost) {
  const std::string frame = relay::encode(r);
  // Refused here, where it is this request's error, rather than by the leader, which would end
  // the connection.
  TORCH_CHECK(frame.size() <= relay::kMaxFrame, "a store request of ", frame.size(),
              " bytes is more than the store relay (DDP_STORE_RELAY) passes on (", relay::kMaxFrame, ")");
  std::lock_guard<std::mutex> hold(mu_);
  if (lost_) return std::nullopt;
  const auto deadline = Clock::now() + relay::bounded(answer_within) + kRelaySlack;
  std::string body, why;
  // A frame not written whole was never answered: the leader reads only whole frames.
  const bool written = relay::write_frame(fd_, frame, deadline, why);
  if (!written || !relay::read_frame(fd_, body, deadline, kRelaySlack, why)) {
    lost_ = true;
    lost_why_ = why;
    if (written && !ask_again_if_lost)
      throw Error("lost the store relay of " + leader_ + " (" + why +
                  ") while it passed on a count to rank 0: it ended or hangs (its own output says why)");
    return std::nullopt;
  }
  auto reply = relay::decode_reply(body);
  if (!reply) throw Error("the store relay of " + leader_ + " sent a malformed answer");
  if (!reply->ok) {
    const Bytes& text = reply->values.empty() ? Bytes{} : reply->values.front();
    if (reply->number == relay::kOwnWords) throw Error(std::string(text.begin(), text.end()));
    TORCH_CHECK(false, std::string(text.begin(), text.end()));
  }
  return reply;
}

bool RelayedStore::relaying() {
  std::lock_guard<std::mutex> hold(mu_);
  return !lost_;
}

c10::intrusive_ptr<c10d::Store> RelayedStore::direct_store() {
  std::lock_guard<std::mutex> hold(mu_);
  if (!direct_store_) {
    if (!direct_)
      throw Error("lost the store relay of " + leader_ + " (" + lost_why_ +
                  "): it ended or hangs (its own output says why)");
    try {
      direct_store_ = direct_();
    } catch (const std::exception& e) {
      throw Error("lost the store relay of " + leader_ + " (" + lost_why_ + "), and rank 0's store directly too (" +
                  e.what() + "): they ended or hang (their own output says why)");
    }
  }
  direct_store_->setTimeout(timeout_);
  return direct_store_;
}

void RelayedStore::set(const std::string& key, const std::vector<std::uint8_t>& value) {
  if (!call(request(Op::Set, {key}, {value}), timeout_)) direct_store()->set(key, value);
}

std::vector<std::uint8_t> RelayedStore::compareSet(const std::string& key, const std::vector<std::uint8_t>& expected,
                                                   const std::vector<std::uint8_t>& desired) {
  auto reply = call(request(Op::CompareSet, {key}, {expected, desired}), timeout_);
  if (!reply) return direct_store()->compareSet(key, expected, desired);
  return reply->values.empty() ? Bytes{} : std::move(reply->values.front());
}

std::vector<std::uint8_t> RelayedStore::get(const std::string& key) {
  auto reply = call(request(Op::Get, {key}, {}, timeout_.count()), timeout_);
  if (!reply) return direct_store()->get(key);
  return reply->values.empty() ? Bytes{} : std::move(reply->values.front());
}

std::int64_t RelayedStore::add(const std::string& key, std::int64_t value) {
  const auto reply = call(request(Op::Add, {key}, {}, value), timeout_, /*ask_again_if_lost=*/false);
  return reply ? reply->number : direct_store()->add(key, value);
}

bool RelayedStore::deleteKey(const std::string& key) {
  const auto reply = call(request(Op::DeleteKey, {key}), timeout_);
  return reply ? reply->number != 0 : direct_store()->deleteKey(key);
}

bool RelayedStore::check(const std::vector<std::string>& keys) {
  const auto reply = call(request(Op::Check, keys), timeout_);
  return reply ? reply->number != 0 : direct_store()->check(keys);
}

std::int64_t RelayedStore::getNumKeys() {
  const auto reply = call(request(Op::NumKeys, {}), timeout_);
  return reply ? reply->number : direct_store()->getNumKeys();
}

void RelayedStore::wait(const std::vector<std::string>& keys) { wait(keys, timeout_); }

void RelayedStore::wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) {
  if (keys.empty()) return;  // as a TCPStore does
  const auto start = Clock::now();
  if (call(request(Op::Wait, keys, {}, timeout.count()), timeout)) return;
  if (timeout.count() <= 0) return direct_store()->wait(keys, timeout);  // no time-out: none left either
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(timeout - (Clock::now() - start));
  direct_store()->wait(keys, std::max(left, std::chrono::milliseconds(1)));
}

c10::intrusive_ptr<c10d::Store> RelayedStore::clone() {
  {
    std::lock_guard<std::mutex> hold(mu_);
    if (lost_ && direct_) return direct_();
  }
  return connect(name_, leader_, timeout_, Clock::now() + relay::kFindLeaderWithin, direct_);
}

}  // namespace ddp::detail
