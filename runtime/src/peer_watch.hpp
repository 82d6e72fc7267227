// Which rank is gone. Gloo reports a killed peer as "connection closed by [address]" and NCCL as a
// hang; neither names the rank, and a frozen peer (stopped process, dead node) shows up only when
// the collective time-out ends. So every rank beats: one UDP datagram to rank 0 per interval,
// which answers each (beat_wire.hpp). Rank 0 keeps every rank's latest beat in one table
// (beat_hub.hpp) and judges: a rank silent for the peer time-out is lost, even while the
// collectives still hang; after a failed collective a census finds the ranks that stopped. Every
// answer carries the verdict, so every rank says the same; a rank whose answers stop finds
// rank 0 lost.
//
// Datagrams rather than the store: a beat holds no connection and asks nothing of the store, so
// rank 0 holds one socket more for the heartbeat of any world (the store's clients took one or two
// connections per rank, and the classic store server a pass over all of them per request), and a
// census costs each rank one datagram. The store is asked once per rank, for rank 0's port.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "beat_hub.hpp"
#include "beat_wire.hpp"
#include "gap.hpp"
#include "ddp/context.hpp"
#include "ddp/rendezvous.hpp"
#include "store_wedge.hpp"
#include "udp.hpp"

namespace ddp::detail {

struct PeerWatchOptions {
  std::chrono::milliseconds interval{1000};
  // A rank whose beat has not come for this long is lost; so is rank 0 when its answers stop.
  std::chrono::milliseconds peer_timeout{60000};
  // How long a rank waits for rank 0's heartbeat port in the store: as long as the process
  // group's own set-up may take, which rank 0 goes through before it listens.
  std::chrono::milliseconds connect_timeout{300000};
  // Once this watch finds a loss, a process still running this much later (its collectives hang
  // instead of failing) is ended with the reason on stderr. Once a failed collective has told the
  // program (explain()), it gets `explained_grace` to end by itself. Zero: never.
  std::chrono::milliseconds exit_grace{5000};
  std::chrono::milliseconds explained_grace{30000};
};

class PeerWatch {
 public:
  // Rank 0 listens and leaves its port in the rendezvous store; the others read it there and
  // start beating. Throws ddp::Error.
  PeerWatch(Rendezvous& met, PeerWatchOptions options);
  // Stops; a rank that never called finish() is noted as having left early.
  ~PeerWatch();
  PeerWatch(const PeerWatch&) = delete;
  PeerWatch& operator=(const PeerWatch&) = delete;

  // After a failed collective: which ranks are lost, in words ("rank 3 of 4 (on n2) ..."), or
  // nothing when every rank still beats. Notes this rank as failing rather than lost, and may
  // wait for a census of a few intervals.
  std::optional<std::string> explain();

  // What this watch has found so far (a lost rank, rank 0 gone): for a caller that looks now and
  // then instead of waiting for a collective to fail.
  std::optional<std::string> verdict();

  // Clean end of the job for this rank: noted as done (not lost). A rank other than 0 stops
  // beating (and still hears a verdict); rank 0 answers the others until it ends.
  void finish();
  // This rank is ending without finish(): noted as the cause, before its connections close and
  // the others' collectives fail.
  void leave();

  // Rank 0: the beats it has taken so far (the scale simulator's rate).
  std::uint64_t beats_heard();

 private:
  using Clock = std::chrono::steady_clock;

  void first_contact();
  std::chrono::milliseconds spread(std::chrono::milliseconds over, std::uint64_t salt) const;
  void run();
  void serve(Clock::time_point now);          // rank 0: take the beats, answer, judge
  void read_answers(Clock::time_point now);   // the others: what rank 0 said
  void judge_rank0(Clock::time_point now);    // the others: rank 0's answers stopped
  void send_beat();                           // the others (mutex_ held)
  void was_refused(Clock::time_point now);    // mutex_ held
  void warn_unanswered(Clock::time_point now, const char* how);  // once; mutex_ held
  Beat own_beat() const;                      // mutex_ held
  void found(const std::string& report, Clock::time_point now);  // mutex_ held
  void note(RankState state);                 // the first note after Running stands
  void wait_recorded(std::chrono::milliseconds at_most);
  void unwedge_store(Clock::time_point now);  // rank 0
  void end_if_past_grace(Clock::time_point now);
  void discount(std::chrono::milliseconds gap);  // this watch did not run for `gap` (gap.hpp)
  std::string rank0_lost(const std::string& detail) const;
  void serve_verdict();

  Context context_;
  PeerWatchOptions options_;
  std::string host_;        // this rank's node
  std::string rank0_host_;  // rank 0's node
  std::uint64_t token_ = 0;
  net::Udp udp_;
  std::optional<BeatHub> hub_;  // rank 0's

  std::mutex mutex_;  // guards the fields below (and hub_)
  std::condition_variable changed_;
  Clock::time_point started_;  // moved on by a gap (discount())
  bool stop_ = false;
  bool finished_ = false;
  bool left_ = false;
  bool explained_ = false;
  bool lingered_ = false;  // rank 0 stayed for its verdict's readers once
  std::optional<std::string> report_;
  Clock::time_point report_at_;
  RankState state_ = RankState::Running;
  std::uint64_t census_seen_ = 0;  // the newest census rank 0 said it began: this rank answers it
  bool census_open_ = false;
  std::uint64_t clear_seen_ = 0;   // the newest census that found every rank
  std::uint64_t counted_ = 0;      // the newest census rank 0 counted this rank in
  std::uint64_t wants_ = 0;        // explain(): a census numbered at least this
  RankState recorded_ = RankState::Running;  // what rank 0 holds of this rank
  bool answered_ever_ = false;
  Clock::time_point answered_at_;
  bool refused_ = false;           // rank 0's port refused a beat: its process ended
  bool heard_verdict_ = false;
  bool warned_ = false;
  Clock::time_point next_beat_;
  Clock::time_point next_look_;
  // Rank 0's guard: reads on the store's connections seen at suspects_at_ (store_wedge.hpp).
  std::vector<StoreRead> suspects_;
  Clock::time_point suspects_at_;
  GapDetector gaps_{std::chrono::milliseconds(0)};  // the watch's thread alone
  std::thread thread_;
};

}  // namespace ddp::detail
