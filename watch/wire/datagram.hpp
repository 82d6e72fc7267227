// The failure watch's messages between nodes: one UDP datagram each (at most kMaxDatagram bytes,
// well under any MTU). The head node's watch listens on UDP port MASTER_PORT of MASTER_ADDR (the
// program's rendezvous is TCP: the two never meet); every other node's watch sends to it and gets
// its answers back:
//
//   member -> head   beat NODE HOST RANKS     every interval; the head answers each with a beat
//                    fail ID FAILURE COUNTS   the node's first failed or frozen rank, and all its
//                                             failed ranks so far, counted: one message per node,
//                                             a new ID when it grows, repeated (with jitter) until
//                                             the head acks its latest ID, dropped on `end`
//                    done ID                  the node's ranks all ended; repeated until acked
//                    ack                      got the head's bye
//   head -> member   beat                     the head is alive
//                    ack ID                   got the member's message ID (for a fail: all the
//                                             node's failures up to it)
//                    end                      the step failed: end your ranks (repeated to stragglers)
//                    bye                      the head node's ranks ended normally: stop watching it
//                                             (repeated to members not done until acked, 6 times
//                                             at most)
//
// Security. Anyone on a node can send to the port, and another user can bind it first (it is
// MASTER_PORT, known to every process of the job): the head's watch then cannot listen and says
// so, and the members talk to a stranger. So the key (128 bits srun drew from getrandom(); it
// reaches each node's watch through slurmstepd, never a command line or a task's environment)
// never travels: each datagram is
//
//   "DDPW" | version 1 | 3 zero bytes | from (u32 LE) | to (u32 LE) | counter (u64 LE)
//          | JSON body | SipHash-2-4-128(key, everything before it)
//
// and a receiver checks, before it looks at the body or allocates anything: the size, the magic,
// that it is the addressee and the sender is one it may hear (the head hears members 1..N-1, a
// member only the head), the MAC (constant time), and that the counter is above the last one
// accepted from that sender (each sender counts up from 1 over all it sends; a replay, or one
// overtaken on the way, is dropped, and the protocol sends again). Only then is the JSON parsed.
// A stranger without the key can therefore neither end a step (a forged `end` or `fail`) nor keep
// a node alive, and a squatter on the port learns nothing but the step's size and timing.
//
// Why keep MASTER_PORT (not a port derived from the key): members must find the head without
// asking anyone, and a derived port is squattable too once the first datagram shows it. Squatting
// is made harmless instead: silence counts only from authenticated contact (judge.hpp: a node
// never heard is never called lost; member.hpp: a head never heard is never called lost), so a
// squatter that swallows the members' datagrams costs frozen-node detection for that step (the
// head warns that nodes never reached it) but ends nothing; failures then reach Slurm through
// each node's own watch (WatchNode::act_alone). Members connect() their socket to the head's
// address, so the kernel drops datagrams from anywhere else before the watch sees them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <vector>

#include "failure.hpp"
#include "siphash.hpp"
#include "watch_args.hpp"

namespace ddp::watch {

inline constexpr std::size_t kMaxDatagram = 1200;
inline constexpr std::size_t kSealHeader = 24;  // magic, version, from, to, counter
inline constexpr std::size_t kSealTag = 16;     // SipHash-2-4-128

struct Datagram {
  enum class Type { Beat, Fail, Done, Ack, End, Bye } type = Type::Beat;
  unsigned node = 0;      // the sender's node index (member -> head)
  std::string host;       // Beat from a member: its node name
  std::string ranks;      // Beat from a member: its ranks ("2-3")
  std::uint64_t id = 0;   // Fail, Done: the message's number on its node; Ack: all up to it
  Failure failure;        // Fail: the node's first failure
  FailureCounts counts;   // Fail: the node's failed ranks so far, by their short form
};

// The JSON body alone, unauthenticated (the tests' and Wire's business): long texts (the error
// message first) are cut to fit kMaxDatagram with the seal around it.
std::string encode_body(const Datagram& d);
// nullopt for anything that is not a well-formed body.
std::optional<Datagram> decode_body(std::string_view bytes);

// The 16 bytes of a valid key (valid_key()); nullopt for anything else.
std::optional<SipKey> key_bytes(std::string_view hex);

// One watch's end of the wire: seals what it sends (its own counter) and opens what it receives
// (the last counter accepted from each sender). See the header comment for the checks.
class Wire {
 public:
  // `me`: this node's index; `nodes`: the step's nodes. An invalid key opens nothing.
  Wire(std::string_view key_hex, unsigned me, unsigned nodes);
  bool keyed() const { return key_.has_value(); }

  std::string seal(const Datagram& d, unsigned to);
  // The datagram (its node set to the sender's index), or nullopt. Nothing is allocated for
  // bytes that fail the seal.
  std::optional<Datagram> open(std::string_view bytes);
  // The cheap part of open(): size, magic, addressee, sender and MAC, without the counter.
  bool authentic(std::string_view bytes, unsigned* from = nullptr, std::uint64_t* counter = nullptr) const;

 private:
  std::optional<SipKey> key_;
  unsigned me_;
  unsigned nodes_;
  std::uint64_t counter_ = 0;
  std::vector<std::uint64_t> last_;  // per sender (the head: every node; a member: the head)
};

}  // namespace ddp::watch
