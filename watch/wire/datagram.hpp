// The failure watch's messages between nodes: one UDP datagram each (at most kMaxDatagram bytes,
// well under any MTU). The head node's watch listens on UDP port MASTER_PORT of MASTER_ADDR (the
// program's rendezvous is TCP: the two never meet); every other node's watch sends to it and gets
// its answers back:
//
//   member -> head   beat NODE HOST RANKS     every interval, with its clock when sent; the head
//                                             answers each with a beat that echoes that time and
//                                             gives its own when it read it and when it answered:
//                                             each member estimates how far its clock is from the
//                                             head's (Member::heard_head_beat), and the failures it
//                                             reports are in the head's time
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
// Security. Anyone on a node can send to any UDP port and bind any free one, and other users'
// programs may run on the same nodes. So the head listens on a port derived from the step's key
// (head_ports(): a few candidates in the site's port range, the next one tried when one is
// taken; a member sends to all of them until the head answers from one), which nobody without
// the key can predict and bind first, and every datagram is sealed
// with ChaCha20-Poly1305 (seal.hpp, OpenSSL's libcrypto) under a key derived from the step's
// 128-bit key (srun drew it with getrandom(); it reaches each node's watch through slurmstepd,
// never a command line or a task's environment, and never travels):
//
//   "DDPW" | version 2 | zero | head's port (u16 LE) | step tag (8) | from (u32 LE) | to (u32 LE)
//          | session (4) | counter (u64 LE) | ChaCha20-Poly1305(JSON body) | tag (16)
//
// with the 36-byte header as associated data and from | session | the counter's low 32 bits as
// the nonce: every node seals under the step's one key, so the sender's index keeps two nodes'
// nonces apart, and a sender counts up from 1 over all it sends under a session drawn when its
// watch starts (a new one should the low bits ever wrap), so none of its own repeats. The head's
// port is the port the head listens on: a member seals each copy for the candidate it goes to,
// and the head seals its own, so a datagram relayed from another port (a candidate someone else
// holds) is refused by the head, and an answer relayed from one is not settled on by a member.
// A receiver checks, cheapest first and before it allocates anything: the size, the magic, the
// step tag (derived from the key: junk and other steps' datagrams stop here), that it is the
// addressee and the sender is one it may hear (the head hears members 1..N-1, a member only the
// head), the seal (which decrypts), and that the counter is above the last one accepted from
// that sender (a replay, or one overtaken on the way, is dropped, and the protocol sends again).
// Only then is the JSON parsed. A stranger without the key can therefore neither end a step (a
// forged `end` or `fail`) nor keep a node alive, and one who holds a port the members send to
// anyway (a candidate taken by chance) reads nothing: not a rank's exception, not a host name.
//
// Squatting stays harmless as before: silence counts only from authenticated contact (judge.hpp:
// a node never heard is never called lost; member.hpp: a head never heard is never called lost),
// so a port nobody answers on costs frozen-node detection for that step (the head warns that nodes
// never reached it) but ends nothing; failures then reach Slurm through each node's own watch
// (WatchNode::act_alone). Once the head has answered, a member connect()s its socket to the
// head's address and port, so the kernel drops datagrams from anywhere else before the watch sees
// them.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <vector>

#include "failure.hpp"
#include "port.hpp"
#include "seal.hpp"
#include "watch_args.hpp"

namespace ddp::watch {

inline constexpr std::size_t kMaxDatagram = 1200;
inline constexpr std::size_t kSealHeader = 36;  // magic, version, step tag, from, to, session, counter
inline constexpr std::size_t kSealTag = seal::kTagBytes;  // Poly1305

struct Datagram {
  enum class Type { Beat, Fail, Done, Ack, End, Bye } type = Type::Beat;
  unsigned node = 0;      // the sender's node index (member -> head)
  std::string host;       // Beat from a member: its node name
  std::string ranks;      // Beat from a member: its ranks ("2-3")
  // Beat: the sender's wall clock when it sent the beat; the head's answer also echoes the
  // member's (echo_ns) and says when the head read it (heard_ns). 0: not given.
  std::int64_t sent_ns = 0, echo_ns = 0, heard_ns = 0;
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
std::optional<std::string> key_bytes(std::string_view hex);

// The UDP ports the head's watch listens on, in the order it tries them, all in `range`: derived
// from the step's key, so every node of the step computes them and nobody else can.
inline constexpr unsigned kHeadPorts = 4;
std::vector<std::uint16_t> head_ports(std::string_view key_hex, const plan::PortRange& range);

// One watch's end of the wire: seals what it sends (its own counter) and opens what it receives
// (the last counter accepted from each sender). See the header comment for the checks.
class Wire {
 public:
  // `me`: this node's index; `nodes`: the step's nodes. An invalid key opens nothing. `session`:
  // drawn from the kernel's random numbers unless given (the tests give two nodes the same).
  using Session = std::array<char, 4>;
  Wire(std::string_view key_hex, unsigned me, unsigned nodes, std::optional<Session> session = std::nullopt);
  bool keyed() const { return aead_ != nullptr; }

  // `head_port`: the head's port the datagram is for (a member: the candidate it sends to; the
  // head: the one it listens on).
  std::string seal(const Datagram& d, unsigned to, std::uint16_t head_port);
  // The datagram (its node set to the sender's index), or nullopt, also when it does not name
  // `head_port` (the head: its own; a member: the port the datagram came from). Nothing is
  // allocated for bytes that fail the cheap checks.
  std::optional<Datagram> open(std::string_view bytes, std::uint16_t head_port);

 private:
  std::unique_ptr<seal::Aead> aead_;
  std::array<char, 8> step_tag_{};
  Session session_{};
  unsigned me_;
  unsigned nodes_;
  std::uint64_t counter_ = 0;
  std::vector<std::uint64_t> last_;  // per sender (the head: every node; a member: the head)
};

}  // namespace ddp::watch
