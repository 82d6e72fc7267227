// Who was heard when, for the two heartbeats that cross nodes: the failure watch's head (a member
// per node, watch/core/judge.hpp) and libddp's rank 0 (a member per rank,
// runtime/src/beat_hub.hpp). The rules both judge silence by, in one place:
// - a member never heard is never judged: its datagrams may be filtered on the way, and a guess
//   must never end a step;
// - a member heard and then quiet for longer than a time-out is silent, unless it ended (its ranks
//   done, or it said it fails or leaves): its silence from then on means nothing;
// - time the watcher did not run (gap.hpp) is nobody's silence: discount() moves every member's
//   last beat on by it.
// Pure and clock-injected. The members still judged are kept ordered by when each was last heard
// (then by index), so that a beat costs O(log N) and a look at the quietest or the latest O(1):
// no judge scans every member on every wake, which at 10,000 nodes, their datagrams arriving one
// per wake, was N^2 work a second.
#pragma once

#include <chrono>
#include <cstddef>
#include <set>
#include <utility>
#include <vector>

namespace ddp {

class Liveness {
 public:
  using Clock = std::chrono::steady_clock;
  using Ms = std::chrono::milliseconds;

  explicit Liveness(std::size_t members) : members_(members) {}

  // A beat (any valid datagram) from `member`. Out of range: ignored.
  void heard(std::size_t member, Clock::time_point now);
  // The member ended (or is ending) on purpose: never silent from now on. Final.
  void ended(std::size_t member);
  // The watcher did not run for `gap`: nobody's silence during it counts.
  void discount(Ms gap);

  bool ever(std::size_t member) const { return member < members_.size() && members_[member].ever; }
  bool has_ended(std::size_t member) const { return member < members_.size() && members_[member].ended; }
  // When the member was last heard (the start of time if never).
  Clock::time_point last(std::size_t member) const {
    return member < members_.size() ? members_[member].last : Clock::time_point{};
  }
  std::size_t heard_count() const { return heard_count_; }

  // Some member still judged has been quiet for longer than `quiet`.
  bool any_quiet_for(Clock::time_point now, Ms quiet) const;
  // Every member still judged has been quiet for longer than `quiet` (true if none is judged).
  bool all_quiet_for(Clock::time_point now, Ms quiet) const;
  // The members still judged that have been quiet for longer than `quiet`, the quietest first.
  std::vector<std::size_t> quiet_for(Clock::time_point now, Ms quiet) const;
  // When the quietest member still judged becomes quiet for longer than `quiet`; max() if none.
  Clock::time_point next_quiet(Ms quiet) const;

 private:
  struct Member {
    Clock::time_point last{};
    bool ever = false;
    bool ended = false;
  };
  bool judged(const Member& m) const { return m.ever && !m.ended; }

  std::vector<Member> members_;
  std::set<std::pair<Clock::time_point, std::size_t>> by_last_;  // the members still judged
  std::size_t heard_count_ = 0;
};

}  // namespace ddp
