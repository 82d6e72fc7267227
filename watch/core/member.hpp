// A member node's side of the failure watch (every node but the head): it beats to the head,
// tells it the node's failures until they are acknowledged, and notices when the head has gone
// silent. Pure, like the judge: the event loop (main/watch_main.cpp) and the simulator feed it
// times and datagrams and send what it returns.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
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
  Ms resend{250};       // an unacknowledged message is sent again this often
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

  // Queue a message that must arrive (a failure, or the node's done); returns its id.
  std::uint64_t send_reliably(Datagram d, Now now);
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
    Clock::time_point last_sent;
  };
  MemberConfig config_;
  Clock::time_point next_beat_;
  Clock::time_point last_heard_{};
  bool head_heard_ = false;
  bool head_gone_ = false;
  std::uint64_t next_id_ = 1;
  std::deque<Pending> pending_;
};

}  // namespace ddp::watch
