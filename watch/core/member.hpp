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

namespace ddp::watch {

struct MemberConfig {
  unsigned node = 1;
  std::string host;
  std::string ranks;
  Ms timeout{45000};    // the head silent this long (after it was heard) is lost
  Ms interval{4500};    // between beats
  Ms phase{0};          // offset of the beats once the head answered: a thousand nodes spread out
  Ms resend{250};       // an unacknowledged message is sent again this often (+ up to a quarter)
  unsigned seed = 1;    // of the jitter: a thousand nodes that failed together resend apart
  Ms alone_after{3000}; // a failure nobody acknowledged this long: the node acts alone
};

class Member {
 public:
  Member(MemberConfig config, Now start);

  void set_ranks(std::string ranks);
  // Any valid datagram from the head.
  void heard_head(Now now);
  void acked(std::uint64_t id);
  // The head's ranks ended normally: its silence from now on means nothing.
  void head_bye() { head_gone_ = true; }
  // This node's watch did not run for GAP (gap.hpp): the head's silence, and the wait for an
  // acknowledgement, during it do not count.
  void discount(Ms gap);

  // Queue a message that must arrive (the node's done); returns its id.
  std::uint64_t send_reliably(Datagram d, Now now);
  // The node's failures so far: its first, and all of them counted. Updates the node's one fail
  // message in place (a new id, sent at the next due()); returns its id.
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
    Alone,     // a failure went unacknowledged: the head is gone or unreachable
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
};

}  // namespace ddp::watch
