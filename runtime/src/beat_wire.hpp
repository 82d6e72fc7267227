// libddp's heartbeat on the wire (peer_watch.hpp): one UDP datagram from each rank to rank 0 per
// beat, and one back. Rank 0 listens on a port the kernel picks and leaves "PORT TOKEN HOST" in
// the rendezvous store (kHeartbeatKey); every other rank reads it once. Little-endian:
//
//   rank -> rank 0   "DDPB" | 1 | 1 (beat)   | state | flags (1: read the verdict)
//                    | token u64 | rank u32 | world u32 | census u64 (the newest it saw: answered)
//                    | wants u64 (a census numbered at least this, for explain(); 0: none)
//                    | host length u8 | host
//   rank 0 -> rank   "DDPB" | 1 | 2 (answer) | state rank 0 holds of the rank | flags (1: a census is open)
//                    | token u64 | rank u32 | world u32 | census u64 (the newest begun)
//                    | clear u64 (the newest census that found every rank)
//                    | counted u64 (the newest census rank 0 counted this rank in)
//                    | verdict length u16 | verdict (the ranks lost, once known)
//
// The token (64 random bits of rank 0's) keeps another job's datagrams, or a stale one of an
// earlier step on the same port, out: anyone who can read the store can read it too, as they can
// write the store's keys, so it authenticates nothing the store does not. Every field is checked
// before it is used, and nothing is allocated for a datagram of the wrong size or token.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ddp::detail {

inline constexpr const char* kHeartbeatKey = "ddp/heartbeat";
// Under the IPv6 minimum MTU with its headers: no datagram is ever fragmented.
inline constexpr std::size_t kMaxHeartbeatDatagram = 1232;
inline constexpr std::size_t kMaxBeatHost = 64;

// What a rank says of itself: the first note after Running stands (a victim that then exits
// stays a victim).
enum class RankState : std::uint8_t {
  Running = 0,
  Failed = 1,  // saw a collective fail: a victim, not the cause
  Left = 2,    // ended without shutdown: the cause
  Done = 3,    // finished the job cleanly
};

struct Beat {
  std::uint64_t token = 0;
  std::uint32_t rank = 0, world = 0;
  RankState state = RankState::Running;
  bool heard_verdict = false;
  std::uint64_t census = 0;
  std::uint64_t wants = 0;
  std::string host;  // cut to kMaxBeatHost bytes
};

struct BeatAnswer {
  std::uint64_t token = 0;
  std::uint32_t rank = 0, world = 0;
  RankState recorded = RankState::Running;
  bool census_open = false;
  std::uint64_t census = 0;
  std::uint64_t clear = 0;
  std::uint64_t counted = 0;
  std::string verdict;  // cut to what fits in one datagram
};

std::string encode(const Beat& beat);
std::string encode(const BeatAnswer& answer);
// The datagram, if it is one of this job's (token, world) from a rank of it.
std::optional<Beat> decode_beat(std::string_view bytes, std::uint64_t token, std::uint32_t world);
// The datagram, if it is rank 0's answer to `rank` of this job.
std::optional<BeatAnswer> decode_answer(std::string_view bytes, std::uint64_t token, std::uint32_t world,
                                        std::uint32_t rank);

}  // namespace ddp::detail
