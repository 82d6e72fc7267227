// Rank 0's side of libddp's heartbeat (peer_watch.hpp): every rank's latest beat in one table, the
// censuses after a failed collective, and the verdict. Pure: no socket and no clock of its own,
// so that the rules are tested directly and rank 0's watch only carries datagrams.
//
// The rules:
// - A rank that beat at least once and, still Running, has not beaten for the peer time-out is
//   silent: the verdict names it with every rank silent for more than three intervals (a node
//   lost takes all its ranks with it). A rank that noted itself Failed, Left or Done is not
//   silent: it ended, or is ending, on purpose.
// - A census begins when a rank asks for one (explain(), after a failed collective): each rank
//   answers by beating with the census' number, which it learns from rank 0's answers. It ends
//   when every rank that ever beat has answered or is Done or Left, or 2.5 intervals after it
//   began once no answer came for an interval (10 intervals at most: a loaded rank 0 takes the
//   answers late); the ranks that did not answer, and those that noted Left, are absent: "ended
//   before the others" when they noted Failed or Left, else lost. A census that finds nobody
//   absent clears it.
// - A rank never heard is never judged: its datagrams may be filtered on the way (a warning
//   says so, once), and then only its collectives' own errors speak for it.
// - The first verdict stands; every answer carries it.
// - Time rank 0's own watch did not run (a suspended job, a stopped or starved rank 0) is nobody's
//   silence: its socket dropped what came meanwhile.
// Who beat when, and the silence rules, are the contract's Liveness (liveness.hpp), which the
// failure watch's head judges by too. Each beat costs O(log R), a look without a census O(1) and
// with one O(R) in memory already held: nothing grows with R per rank.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "beat_wire.hpp"
#include "liveness.hpp"

namespace ddp::detail {

class BeatHub {
 public:
  using Clock = std::chrono::steady_clock;

  BeatHub(int world, std::chrono::milliseconds interval, std::chrono::milliseconds peer_timeout,
          Clock::time_point start);

  // A beat, from the socket or rank 0's own watch; stale censuses and a second note are ignored.
  void heard(const Beat& beat, Clock::time_point now);
  // Begins and ends censuses and finds silent ranks. Often: a few times an interval.
  void look(Clock::time_point now);
  BeatAnswer answer_for(std::uint32_t rank, std::uint64_t token) const;
  // Rank 0's watch did not run for `gap` (gap.hpp: the job suspended, rank 0 stopped or starved):
  // nobody's silence during it counts, and an open census' clock stood still with it.
  void discount(std::chrono::milliseconds gap);

  const std::optional<std::string>& verdict() const { return verdict_; }
  // Ranks other than 0 that said they read the verdict.
  int heard_verdict() const { return heard_verdict_; }
  // Ranks that never beat, once `allowed` has passed since the start; empty before or when all did.
  std::vector<int> never_heard(Clock::time_point now, std::chrono::milliseconds allowed) const;
  std::uint64_t beats() const { return beats_; }
  // Ranks not yet Done.
  int running() const;
  // Ranks other than 0 still beating that have not said they read the verdict: rank 0 lingers
  // for them before it ends.
  int yet_to_hear(Clock::time_point now) const;

 private:
  struct Rank {
    RankState state = RankState::Running;
    std::uint64_t answered = 0;
    bool heard_verdict = false;
    std::string host;
  };
  void begin_census(Clock::time_point now);
  void end_census();
  // "rank 2 of 4 (on n2) and rank 3 of 4 (on n2) " + what: the first `named` ranks, the rest counted.
  std::string describe(const std::vector<int>& ranks, std::size_t named, const std::string& what) const;
  void decide(const std::vector<int>& left, const std::vector<int>& lost, const std::string& lost_why);

  std::vector<Rank> ranks_;
  Liveness liveness_;  // by rank; a rank that noted Failed, Left or Done has ended there
  std::chrono::milliseconds interval_, peer_timeout_;
  Clock::time_point start_;
  std::uint64_t census_ = 0, clear_ = 0, wanted_ = 0;
  bool census_open_ = false;
  Clock::time_point census_began_{};
  Clock::time_point census_heard_at_{};  // the latest answer to the open census
  std::optional<std::string> verdict_;
  int heard_verdict_ = 0;
  std::uint64_t beats_ = 0;
};

}  // namespace ddp::detail
