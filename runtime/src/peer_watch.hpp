// Which rank is gone. Gloo reports a killed peer as "connection closed by [address]" and NCCL as a
// hang; neither names the rank, and a frozen peer (stopped process, dead node) shows up only when
// the collective time-out ends. So every rank beats a counter in the rendezvous store once per
// interval and watches the next rank's. A failed collective, or a neighbour silent for longer
// than the peer time-out (even while the collectives still hang), starts a census: every live
// rank answers with a key of its own, and one rank finds the first absent ones by halving the
// ranks with multi-key checks. Each rank makes 3 requests per interval, and a census a few per
// rank plus a few dozen for the rank that counts, whatever the job size.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <torch/csrc/distributed/c10d/Store.hpp>

#include "ddp/context.hpp"
#include "store_wedge.hpp"

namespace ddp::detail {

struct PeerWatchOptions {
  std::chrono::milliseconds interval{1000};
  // A neighbour whose beat has not moved for this long is lost.
  std::chrono::milliseconds peer_timeout{60000};
  // The connection's first answer waits behind every other rank's new connection to rank 0's
  // store (the classic server accepts one per pass over all of them: about 20 s for 8,192 ranks
  // on the 2-core machine), so it may take as long as the process group's own set-up.
  std::chrono::milliseconds connect_timeout{300000};
  // Once this watch finds a loss, a process still running this much later (its collectives hang
  // instead of failing) is ended with the reason on stderr. Once a failed collective has told the
  // program (explain()), it gets `explained_grace` to end by itself. Zero: never.
  std::chrono::milliseconds exit_grace{5000};
  std::chrono::milliseconds explained_grace{30000};
};

class PeerWatch {
 public:
  // Opens its own client connection to the store at MASTER_ADDR:MASTER_PORT (the backend's is
  // not for sharing across threads) and starts beating. Throws ddp::Error.
  PeerWatch(const Context& context, PeerWatchOptions options);
  // Stops; a rank that never called finish() is noted as having left early.
  ~PeerWatch();
  PeerWatch(const PeerWatch&) = delete;
  PeerWatch& operator=(const PeerWatch&) = delete;

  // After a failed collective: which ranks are lost, in words ("rank 3 of 4 (on n2) ..."), or
  // nothing when every rank still beats. Notes this rank as failing rather than lost, and may
  // take a census of a few intervals.
  std::optional<std::string> explain();

  // What this watch has found so far (a lost rank, rank 0 gone), without a store request: for a
  // caller that looks now and then instead of waiting for a collective to fail.
  std::optional<std::string> verdict();

  // Clean end of the job for this rank: noted as done (not lost), and the beat stops.
  void finish();
  // This rank is ending without finish(): noted as the cause, before its connections close and
  // the others' collectives fail. The beat goes on, so a hang on the way out still ends.
  void leave();

 private:
  // One request on the store connection: holds it, and is timed by guard().
  class Request {
   public:
    explicit Request(PeerWatch& watch);
    ~Request();

   private:
    PeerWatch& watch_;
    std::lock_guard<std::mutex> lock_;
  };

  void run();
  void guard();
  void unwedge_store(std::chrono::steady_clock::duration pending);
  void tick();
  std::chrono::milliseconds silence_allowed() const;  // before the neighbour is silent
  bool neighbour_noted(int next);  // it left a note (asked once it is, since a rank notes once)
  // The census after a failure (`silent_why` says how the absent were found silent): the verdict,
  // or nothing when every rank answered. One rank counts; the others answer and wait for it.
  std::optional<std::string> census(const std::string& silent_why);
  std::optional<std::string> count_absent(std::int64_t round, int attempt, const std::string& silent_why);
  // The published verdict, counted as heard once (rank 0 stays while ranks read it); nothing
  // when a census found every rank.
  std::optional<std::string> read_verdict();
  // Answers every census started up to `alarm` that this rank has not answered yet.
  void answer(std::int64_t alarm);
  // "rank 2 of 4 (on n2) and rank 3 of 4 (on n2) " + what; `more` absent ranks counted after them.
  std::string describe(const std::vector<int>& ranks, std::size_t more, const std::string& what);
  void serve_verdict();
  std::string host_of(int rank);
  std::string note_of(int rank);
  std::string set_note_once(const std::string& note);  // the note that stands
  std::string rank0_lost(const std::string& detail) const;
  std::string publish(const std::string& report);

  Context context_;
  PeerWatchOptions options_;
  std::string rank0_host_;
  c10::intrusive_ptr<c10d::Store> store_;
  std::chrono::milliseconds store_timeout_{0};
  bool store_closed_ = false;  // the watch thread's own: rank 0's process ended
  std::mutex store_mutex_;  // one request at a time on the connection
  std::atomic<std::chrono::steady_clock::rep> request_since_{0};  // 0: none in flight
  std::atomic<std::chrono::steady_clock::rep> last_request_at_{0};  // when the latest one began

  std::mutex mutex_;  // guards the fields below
  std::condition_variable wake_;
  bool stop_ = false;
  bool guard_stop_ = false;  // the guard outlives finish(): a request there may hang too
  bool finished_ = false;
  bool explained_ = false;
  std::optional<std::string> report_;
  std::chrono::steady_clock::time_point report_at_;
  std::int64_t neighbour_beat_ = -1;
  std::chrono::steady_clock::time_point neighbour_moved_;
  bool neighbour_noted_ = false;  // the neighbour left a note: it ended or is failing, not silent
  std::atomic<std::int64_t> answered_{0};  // the last census this rank answered (set under store_mutex_)
  std::atomic<bool> done_counted_{false};  // finish() counted this rank in ddp/done
  std::atomic<bool> heard_{false};  // this rank read the published verdict (the tick stops)
  // Rank 0's guard: reads on the store's connections seen at suspects_at_ (store_wedge.hpp).
  std::vector<StoreRead> suspects_;
  std::chrono::steady_clock::time_point suspects_at_;
  std::thread thread_;
  std::thread guard_thread_;
};

}  // namespace ddp::detail
