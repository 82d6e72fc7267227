// A member node's side of the failure watch (every node but the head): it beats to the head,
// tells it the node's failures (one message, however many of its ranks fail) until they are
// acknowledged, and notices when the head has gone silent. Pure, like the judge: the event loop
// (main/watch_node.cpp) and the simulator (bench/watch_sim.cpp) feed it times and datagrams and
// send what it returns.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <random>
#include <vector>

#include "datagram.hpp"
#include "failure.hpp"
#include "watch_args.hpp"

namespace ddp::watch {

struct MemberConfig {
  unsigned node = 1;
  std::string host;
  std::string ranks;
  Ms timeout{std::chrono::seconds(kDefaultTimeout)};  // the head silent this long (after it was heard) is lost
  Ms interval{4500};    // between beats
  Ms phase{0};          // offset of the beats once the head answered: a thousand nodes spread out
  Ms resend{250};       // an unacknowledged message is sent again this often (+ up to a quarter)
  unsigned seed = 1;    // of the jitter: a thousand nodes that failed together resend apart
  Ms alone_after{3000}; // a failure nobody acknowledged this long: node 1 acts alone,
  Ms alone_tier{5000};  // and each node this much later per doubling of its index (alone_wait)
};

// How long node `node`'s unacknowledged failure waits, while the node's tasks run, before the
// node asks Slurm to end the step itself: node 1 after `alone_after`, nodes 2-3 one tier later,
// 4-7 two, ... 8,192-16,383 thirteen (68 s at the defaults). With the head gone every member's
// ranks fail or hang, and each asking slurmctld at once would be a storm of N requests; the first
// tier with a failure asks, and its request ends the step (and every other node's wait) before
// the next tier's turn. A node whose tasks have all ended leaves within the linger (2.5 s, and
// slurmstepd waits 3 s for it), so it waits `alone_after` alone, as every node did before.
Ms alone_wait(const MemberConfig& c);

class Member {
 public:
  Member(MemberConfig config, Now start);

  void set_ranks(std::string ranks);
  // Any valid datagram from the head.
  void heard_head(Now now);
  // The node's tasks have all ended: the watch leaves soon, and waits no tier (alone_wait).
  void tasks_ended() { tasks_ended_ = true; }
  // The head's answer to a beat: the beat's time (echo_ns, this node's clock), when the head read
  // it and when it answered (heard_ns, sent_ns: the head's clock), and `now`, when it arrived.
  // Gives how far the head's clock is from this node's, as NTP does: the half of the round trip
  // not spent at the head is the error, and the answer with the shortest round trip is believed.
  void heard_head_beat(std::int64_t echo_ns, std::int64_t heard_ns, std::int64_t sent_ns, Now now);
  // The head's clock minus this node's, as estimated (0 until an answer came).
  std::int64_t head_clock_offset_ns() const { return offset_ns_; }

  void acked(std::uint64_t id);
  // The head's ranks ended normally: its silence from now on means nothing.
  void head_bye() { head_gone_ = true; }
  // This node's watch did not run for GAP (gap.hpp): the head's silence, and the wait for an
  // acknowledgement, during it do not count.
  void discount(Ms gap);

  // Queue a message that must arrive (the node's done); returns its id.
  std::uint64_t send_reliably(Datagram d, Now now);
  // The node's failures so far: its first, and all of them counted. Updates the node's one fail
  // message in place (a new id, sent at the next due()); returns its id. The first failure's time
  // goes in the head's clock: the head orders every node's failures by it, and a node whose clock
  // is a few milliseconds behind would otherwise be named for a failure that came after another's.
  std::uint64_t report(const Failure& first, const FailureCounts& counts, Now now);
  // The head said end: its verdict is out, so the node's failures need no telling (dropped), and
  // the node never acts alone.
  void ended();
  bool all_acked() const { return pending_.empty(); }

  // Beats and resends due now (each at most once per call).
  std::vector<Datagram> due(Now now);

  enum class Alarm {
    None,
    HeadLost,  // the head was heard, then stayed silent for the time-out
    Alone,     // a failure went unacknowledged for alone_wait(): the head is gone or unreachable
  };
  Alarm alarm(Now now) const;
  bool head_heard() const { return head_heard_; }
  bool head_gone() const { return head_gone_; }
  // The silence that made the head lost, in whole seconds.
  unsigned head_silent_s(Now now) const;
  Clock::time_point next_event(Now now) const;

 private:
  struct Pending {
    Datagram d;
    Clock::time_point first_sent;
    Clock::time_point next_send;
  };
  Ms resend_delay();

  MemberConfig config_;
  std::minstd_rand random_;
  bool ended_ = false;
  Clock::time_point next_beat_;
  Clock::time_point last_heard_{};
  bool head_heard_ = false;
  bool head_gone_ = false;
  std::uint64_t next_id_ = 1;
  std::deque<Pending> pending_;
  bool tasks_ended_ = false;
  std::int64_t offset_ns_ = 0;
  std::int64_t offset_delay_ns_ = -1;  // the round trip of the answer believed; -1: none yet
  Clock::time_point offset_at_{};
};

}  // namespace ddp::watch
