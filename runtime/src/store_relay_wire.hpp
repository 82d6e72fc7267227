// How a node's ranks reach its leader's store relay (store_relay.hpp): one Unix stream socket per
// rank, named in the abstract namespace (nothing on disk to clean up, seen only inside the node's
// network namespace), carrying frames: a 32-bit length, then the body. Both ends accept only a peer
// of their own user, so another user's program that takes the name first is found, not trusted.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ddp::detail::relay {

using Clock = std::chrono::steady_clock;
using Bytes = std::vector<std::uint8_t>;

// The c10d::Store calls a rank makes, one frame each.
enum class Op : std::uint8_t { Set = 1, CompareSet, Get, Add, Check, Wait, DeleteKey, NumKeys };

struct Request {
  Op op = Op::Set;
  std::int64_t number = 0;  // Add: the amount; Get, Wait: the time-out in milliseconds
  std::vector<std::string> keys;
  std::vector<Bytes> values;  // Set: the value; CompareSet: the expected and the new value
};

struct Reply {
  bool ok = true;
  // Add, NumKeys: the count; Check, DeleteKey: 1 for true; a failure: kOwnWords or 0
  std::int64_t number = 0;
  std::vector<Bytes> values;  // Get, CompareSet: the value; a failure: its message
};

// A failure in libddp's own words (a ddp::Error: the leader could not reach rank 0, and says why),
// which a rank raises as they are rather than as a store's failure.
constexpr std::int64_t kOwnWords = 1;

// A time-out as the relay waits it: c10d's "no time-out" (zero) and anything beyond a year become
// a year, so that a deadline computed from it never overflows.
inline std::chrono::milliseconds bounded(std::chrono::milliseconds timeout) {
  constexpr std::chrono::milliseconds kYear = std::chrono::hours(24 * 365);
  return timeout.count() > 0 && timeout < kYear ? timeout : kYear;
}

// How long a node's ranks look for their leader's relay (a quarter of the rendezvous time-out at
// most) before they reach rank 0 themselves: a leader listens first thing in its meet(), so
// longer means it is not coming.
inline constexpr std::chrono::seconds kFindLeaderWithin{10};

// A frame's body may not be longer: a store value is a rank's address or a short text, and a
// longer length is a corrupt or foreign stream, not a request to allocate for.
inline constexpr std::uint32_t kMaxFrame = 64u << 20;

std::string encode(const Request& request);
std::string encode(const Reply& reply);
// nullopt for a body that is not one whole, well-formed message.
std::optional<Request> decode_request(std::string_view body);
std::optional<Reply> decode_reply(std::string_view body);

// The relay's name for one node of one step: the store's address and the node, so that two steps
// on a node (or two simulated nodes on one machine) never meet each other's relay.
std::string socket_name(const std::string& master_addr, std::uint16_t master_port, int node_rank);

// A listening socket under `name`, or -1 with errno set (EADDRINUSE: someone holds the name).
int listen_on(const std::string& name);
// Whether some program listens under `name` now (a leader whose bind failed asks who took it).
bool name_in_use(const std::string& name);
// A socket connected to `name`, or -1 with errno set (ECONNREFUSED: nobody listens yet).
int connect_to(const std::string& name);
// Whether the peer of a connected Unix socket runs as this process's effective user.
bool peer_is_same_user(int fd);

// One frame in full, or false with `why` (the peer closed, the deadline passed, too long). A
// deadline of nullopt waits for as long as the peer keeps the socket open (a rank idle between
// requests); a frame once begun must end by `body_within` after its first byte.
bool write_frame(int fd, const std::string& body, Clock::time_point deadline, std::string& why);
bool read_frame(int fd, std::string& body, std::optional<Clock::time_point> deadline,
                Clock::duration body_within, std::string& why);

}  // namespace ddp::detail::relay
