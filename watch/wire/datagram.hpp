// The failure watch's messages between nodes: one UDP datagram each, a JSON object (at most
// kMaxDatagram bytes, well under any MTU), carrying the step's secret key. The head node's watch
// listens on UDP port MASTER_PORT of MASTER_ADDR (the program's rendezvous is TCP: the two never
// meet); every other node's watch sends to it and gets its answers back:
//
//   member -> head   beat NODE HOST RANKS     every interval; the head answers each with a beat
//                    fail ID FAILURE          a rank of the node failed or froze; repeated until acked
//                    done ID                  the node's ranks all ended; repeated until acked
//   head -> member   beat                     the head is alive
//                    ack ID                   got the member's message ID
//                    end                      the step failed: end your ranks (repeated to stragglers)
//                    bye                      the head node's ranks ended normally: stop watching it
//
// A datagram without the key, too long, or not one of these is dropped unread: anyone can send
// to the port, and only the step's own watches know the key (srun made it; it reaches each
// node's watch through slurmstepd, never a command line or a task's environment).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "failure.hpp"
#include "watch_args.hpp"

namespace ddp::watch {

inline constexpr std::size_t kMaxDatagram = 1200;

struct Datagram {
  enum class Type { Beat, Fail, Done, Ack, End, Bye } type = Type::Beat;
  unsigned node = 0;      // the sender's node index (member -> head)
  std::string host;       // Beat from a member: its node name
  std::string ranks;      // Beat from a member: its ranks ("2-3")
  std::uint64_t id = 0;   // Fail, Done: the message's number on its node; Ack: the one acked
  Failure failure;        // Fail
};

// The datagram's bytes; long texts (the error message first) are cut to fit kMaxDatagram.
std::string encode(const Datagram& d, std::string_view key);
// nullopt for anything that is not a well-formed datagram of this step.
std::optional<Datagram> decode(std::string_view bytes, std::string_view key);

}  // namespace ddp::watch
