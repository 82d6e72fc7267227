#include "peer_watch.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include "ddp/error.hpp"
#include "rank_places.hpp"
#include "rendezvous.hpp"
#include "store_wedge.hpp"
#include "torch_compat.hpp"

namespace ddp::detail {
namespace {

using Clock = std::chrono::steady_clock;

// Notes a rank leaves about itself, so that a census does not blame a rank that ended on purpose.
constexpr const char* kFailed = "failed";  // saw a collective fail: a victim, not the cause
constexpr const char* kLeft = "left";      // ended without shutdown: the cause
constexpr const char* kDone = "done";      // finished the job cleanly
constexpr const char* kLostKey = "ddp/lost";
constexpr const char* kCensusKey = "ddp/census";        // the rank that counts for all
constexpr const char* kCensusDoneKey = "ddp/census/done";  // set once its count is over
constexpr auto kVerdictLinger = std::chrono::seconds(10);

std::string beat_key(int rank) { return "ddp/beat/" + std::to_string(rank); }
std::string note_key(int rank) { return "ddp/note/" + std::to_string(rank); }

std::vector<std::uint8_t> bytes(const std::string& s) { return {s.begin(), s.end()}; }
std::string text(const std::vector<std::uint8_t>& b) { return {b.begin(), b.end()}; }

}  // namespace

PeerWatch::PeerWatch(const Context& context, PeerWatchOptions options)
    : context_(context), options_(options), rank0_host_(context.master_addr) {
  c10d::TCPStoreOptions o;
  o.port = context.master_port;
  o.isServer = false;
  o.waitWorkers = false;
  // A request that takes this long means rank 0, which serves the store, is gone.
  store_timeout_ = std::max(options.peer_timeout, std::chrono::milliseconds(1000));
  o.timeout = std::max(options.connect_timeout, store_timeout_);
  try {
    const auto connect = [&] { return compat::make_tcp_store(context.master_addr, o); };
    store_ = first_answer(connect(), context.rank, Clock::now(), o.timeout,
                          [&](c10d::Store& s) { s.wait({arrival_key(context.rank)}, o.timeout); }, connect);
    // Then the watch's own time-out, for requests from here on: LibTorch 1.13 arms the
    // connection's receive time-out in each wait (and only there), and without it a frozen rank 0
    // would block the watch forever instead of being found.
    store_->setTimeout(store_timeout_);
    store_->wait({arrival_key(context.rank)}, store_timeout_);
    // The first beat at once: the neighbour's watch knows from it that this one runs.
    store_->add(beat_key(context.rank), 1);
    rank0_host_ = host_of(0);
  } catch (const std::exception& e) {
    throw Error("rank " + std::to_string(context.rank) + " could not open its heartbeat connection to " +
                context.master_addr + ":" + std::to_string(context.master_port) + ": " +
                compat::message_of(e));
  }
  neighbour_moved_ = Clock::now();
  thread_ = std::thread([this] { run(); });
  guard_thread_ = std::thread([this] { guard(); });
}

PeerWatch::~PeerWatch() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (!finished_) leave();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    guard_stop_ = true;
  }
  wake_.notify_all();
  if (guard_thread_.joinable()) guard_thread_.join();
}

void PeerWatch::leave() {
  try {
    set_note_once(kLeft);
  } catch (const std::exception&) {
    // The store is gone (rank 0 ended first): the others see that on their own.
  }
}

std::string PeerWatch::host_of(int rank) {
  Request request(*this);
  const std::string key = arrival_key(rank);
  return store_->check({key}) ? text(store_->get(key)) : std::string("an unknown node");
}

std::string PeerWatch::note_of(int rank) {
  Request request(*this);
  const std::string key = note_key(rank);
  return store_->check({key}) ? text(store_->get(key)) : std::string();
}

void PeerWatch::set_note_once(const std::string& note) {
  Request request(*this);
  // compareSet against "nothing yet": the first note a rank leaves is the true one (a victim that
  // then exits stays a victim).
  store_->compareSet(note_key(context_.rank), {}, bytes(note));
}

std::string PeerWatch::publish(const std::string& report) {
  Request request(*this);
  // The first rank to find a loss speaks for all, so every rank prints the same cause.
  return text(store_->compareSet(kLostKey, {}, bytes(report)));
}

std::string PeerWatch::rank0_lost(const std::string& detail) const {
  if (context_.rank == 0)
    return "the rendezvous store this rank serves stopped answering (" + detail +
           "): a client holds it with a request it never finished, or this process is starved";
  return "lost contact with rank 0 of " + std::to_string(context_.world_size) + " (on " +
         rank0_host_ + "), which serves the rendezvous store: it ended, was killed, or its node or " +
         "network failed (" + detail + ")";
}

std::optional<std::string> PeerWatch::verdict() {
  std::lock_guard<std::mutex> lock(mutex_);
  return report_;
}

void PeerWatch::finish() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (finished_) return;
    finished_ = true;
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  try {
    set_note_once(kDone);
  } catch (const std::exception&) {
    // Without the store the shutdown barrier that follows reports the problem.
  }
}

void PeerWatch::run() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_) {
    wake_.wait_for(lock, options_.interval, [this] { return stop_; });
    if (stop_) break;
    lock.unlock();
    tick();
    lock.lock();
  }
}

PeerWatch::Request::Request(PeerWatch& watch) : watch_(watch), lock_(watch.store_mutex_) {
  watch_.request_since_ = Clock::now().time_since_epoch().count();
}

PeerWatch::Request::~Request() { watch_.request_since_ = 0; }

// The store's requests have no time-out of their own on LibTorch 2.x (1.13 armed one on the
// connection's first wait): a frozen rank 0 would hang the beat, a census or a note forever. So
// this thread times them, and ends the process once a loss is known and its grace is over,
// whichever thread found it and wherever the others hang.
void PeerWatch::guard() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!guard_stop_) {
    wake_.wait_for(lock, options_.interval / 4, [this] { return guard_stop_; });
    if (guard_stop_) break;
    const auto since = request_since_.load();
    const auto pending = since == 0 ? Clock::duration(0)
                                    : Clock::now() - Clock::time_point(Clock::duration(since));
    if (!report_ && context_.rank != 0 && since != 0 && pending >= store_timeout_) {
      report_ = rank0_lost("no answer to a request within " + seconds_text(store_timeout_) + " s");
      report_at_ = Clock::now();
    }
    if (context_.rank == 0) {
      lock.unlock();  // reads /proc: the other threads need not wait for it
      unwedge_store(pending);
      lock.lock();
    }
    const auto grace = explained_ ? options_.explained_grace : options_.exit_grace;
    if (report_ && grace.count() > 0 && Clock::now() - report_at_ >= grace) {
      std::fprintf(stderr,
                   "[rank %d/%d] error: %s. Its collectives cannot complete; ending this "
                   "process (%s s after the loss was known)\n",
                   context_.rank, context_.world_size, report_->c_str(), seconds_text(grace).c_str());
      std::fflush(stderr);
      std::_Exit(EXIT_FAILURE);
    }
  }
}

// Rank 0's own request to its own store waits: the server is not answering anyone. If a
// client's half-sent request holds it (store_wedge.hpp), drop that client well before the other
// ranks' requests time out, so they find the silent ranks instead of blaming rank 0.
void PeerWatch::unwedge_store(Clock::duration pending) {
  const auto step = store_timeout_ / 8;
  if (pending < step) {
    suspects_.clear();
    return;
  }
  const auto now = Clock::now();
  if (!suspects_.empty() && now - suspects_at_ < step) return;
  auto reads = store_reads(context_.master_port);
  for (const auto& read : stuck_reads(suspects_, reads)) {
    if (!drop_connection(read)) continue;
    std::fprintf(stderr,
                 "[rank 0/%d] warning: the rendezvous store this rank serves waited over %s s "
                 "for the rest of a request from %s (its node or network failed mid-request); "
                 "closed that connection so the store answers the other ranks again\n",
                 context_.world_size,
                 seconds_text(std::chrono::duration_cast<std::chrono::milliseconds>(pending))
                     .c_str(),
                 read.peer.c_str());
    std::fflush(stderr);
  }
  suspects_ = std::move(reads);
  suspects_at_ = now;
}

void PeerWatch::tick() {
  if (store_closed_) return;
  std::optional<std::string> found;
  const auto started = Clock::now();
  try {
    {
      Request request(*this);
      store_->add(beat_key(context_.rank), 1);
      if (store_->check({kLostKey})) found = text(store_->get(kLostKey));
    }
    // Only a silent neighbour is lost. One that left a note ended on purpose or is failing
    // already: if the others still need it, their collectives fail and the census names it.
    const int next = (context_.rank + 1) % context_.world_size;
    if (!found && note_of(next).empty()) {
      std::int64_t beat = 0;
      {
        Request request(*this);
        beat = store_->add(beat_key(next), 0);
      }
      if (beat != neighbour_beat_) {
        neighbour_beat_ = beat;
        neighbour_moved_ = Clock::now();
      } else if (Clock::now() - neighbour_moved_ > silence_allowed() && silent_before_.empty()) {
        // Silent for good. Its node's other ranks likely are too: a census over the next beats
        // (this thread keeps beating meanwhile) names all of them.
        silent_before_ = beats();
        silent_due_ = Clock::now() + options_.interval * 5 / 2;
      }
    }
    if (!found && !silent_before_.empty() && Clock::now() >= silent_due_) {
      const auto lost = silent(silent_before_, beats());
      silent_before_.clear();
      if (!lost.empty())
        found = publish(describe(lost, "stopped responding: no heartbeat for " +
                                           seconds_text(options_.peer_timeout) +
                                           " s (DDP_PEER_TIMEOUT); it hangs, was stopped, or its "
                                           "node or network failed"));
    }
  } catch (const std::exception& e) {
    // A store that does not answer within the time-out: rank 0 is frozen or cut off, and
    // collectives with it will hang. One that closed at once: rank 0's process ended; if the
    // others still need it their collectives fail by themselves, and if not nothing is wrong.
    if (Clock::now() - started >= store_timeout_ * 9 / 10)
      found = rank0_lost(compat::message_of(e));
    else
      store_closed_ = true;
  }
  if (!found) return;
  std::lock_guard<std::mutex> lock(mutex_);
  if (!report_) {
    report_ = found;
    report_at_ = Clock::now();
  }
}

// A neighbour whose watch has not beaten yet (it beats once as soon as it is connected) may still
// be connecting, which takes longer with the job (thousands of ranks connecting to rank 0's
// store): judged as silent before then, it would be named lost, and every rank that found one
// would take a census. Once connected, it has the peer time-out.
std::chrono::milliseconds PeerWatch::silence_allowed() const {
  return neighbour_beat_ > 0 ? options_.peer_timeout : std::max(options_.peer_timeout, options_.connect_timeout);
}

std::vector<std::int64_t> PeerWatch::beats() {
  std::vector<std::int64_t> b(context_.world_size, 0);
  for (int r = 0; r < context_.world_size; ++r) {
    if (r == context_.rank) continue;
    // One request at a time for the guard: the whole loop grows with the job, one request does not.
    Request request(*this);
    b[r] = store_->add(beat_key(r), 0);
  }
  return b;
}

std::vector<int> PeerWatch::silent(const std::vector<std::int64_t>& before,
                                   const std::vector<std::int64_t>& after) {
  std::vector<int> lost;
  for (int r = 0; r < context_.world_size; ++r)
    if (r != context_.rank && after[r] == before[r] && note_of(r).empty()) lost.push_back(r);
  return lost;
}

std::string PeerWatch::describe(const std::vector<int>& ranks, const std::string& what) {
  // A rack lost names its first ranks and counts the others: the verdict every rank prints, and
  // the store's host lookups behind it, must not grow with the job.
  const std::size_t named = std::min(ranks.size(), plan::kMaxNamedRanks);
  const bool counted = named < ranks.size();
  std::string who;
  for (std::size_t i = 0; i < named; ++i)
    who += std::string(i == 0 ? "" : i + 1 == named && !counted ? " and " : ", ") + "rank " +
           std::to_string(ranks[i]) + " of " + std::to_string(context_.world_size) + " (on " +
           host_of(ranks[i]) + ")";
  if (counted) who += " and " + std::to_string(ranks.size() - named) + " more ranks";
  return who + " " + what;
}

// Every rank whose collective failed asks at once, and R ranks each counting R others would be R²
// requests on rank 0's store. So the first to ask counts for all and the others wait for its
// verdict, asking one key now and then; if it never finishes (it was lost itself, mid-count),
// each counts for itself.
std::optional<std::string> PeerWatch::census() {
  const std::string me = std::to_string(context_.rank);
  std::string counter;
  {
    Request request(*this);
    counter = text(store_->compareSet(kCensusKey, {}, bytes(me)));
  }
  if (counter == me) {
    auto verdict = count_lost();
    Request request(*this);
    store_->set(kCensusDoneKey, bytes(me));
    return verdict;
  }
  // Its count: a few beats, then about 4 requests per rank on a store that answers in well
  // under a millisecond each.
  const auto until = Clock::now() + options_.interval * 9 / 2 +
                     std::chrono::milliseconds(context_.world_size);
  while (Clock::now() < until) {
    std::this_thread::sleep_for(options_.interval / 2);
    Request request(*this);
    if (store_->check({kLostKey})) return text(store_->get(kLostKey));
    // Its verdict, if any, was published before this key: asked again, it is there now.
    if (store_->check({kCensusDoneKey}))
      return store_->check({kLostKey}) ? std::optional(text(store_->get(kLostKey))) : std::nullopt;
  }
  return count_lost();
}

std::optional<std::string> PeerWatch::count_lost() {
  const auto before = beats();
  // Long enough for every live rank to beat at least twice, even on a loaded node.
  const auto until = Clock::now() + options_.interval * 5 / 2;
  while (Clock::now() < until) {
    std::this_thread::sleep_for(options_.interval / 4);
    Request request(*this);
    if (store_->check({kLostKey})) return text(store_->get(kLostKey));
  }
  const auto silent_ranks = silent(before, beats());
  std::vector<int> left;
  for (int r = 0; r < context_.world_size; ++r)
    if (r != context_.rank && note_of(r) == kLeft) left.push_back(r);
  std::string report;
  if (!left.empty()) report = describe(left, "ended before the others; its own output says why");
  if (!silent_ranks.empty())
    report += (report.empty() ? "" : "; ") +
              describe(silent_ranks,
                       "stopped responding: it was killed, crashed, or its node or network failed");
  if (report.empty()) return std::nullopt;
  return publish(report);
}

std::optional<std::string> PeerWatch::explain() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!explained_) report_at_ = Clock::now();  // the program knows now: its grace starts
    explained_ = true;
    if (report_) return report_;
  }
  std::optional<std::string> report;
  try {
    set_note_once(kFailed);
    report = census();
  } catch (const std::exception& e) {
    if (context_.rank != 0) report = rank0_lost(compat::message_of(e));
  }
  if (report) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!report_) {
        report_ = report;
        report_at_ = Clock::now();
      }
    }
    if (context_.rank == 0) serve_verdict();
  }
  return report;
}

void PeerWatch::serve_verdict() {
  // Rank 0 serves the store: if it ended now, ranks whose collectives fail a moment later (the
  // failure spreads rank by rank) could no longer read the verdict and would only see rank 0
  // gone. Stay until every other rank has either left a note or stopped beating, for a while.
  const int world = context_.world_size;
  const auto start = Clock::now();
  const auto silent_after = options_.interval * 5 / 2;
  std::vector<std::int64_t> last(world, -1);
  std::vector<Clock::time_point> moved(world, start);
  try {
    while (Clock::now() - start < kVerdictLinger) {
      int unsettled = 0;
      for (int r = 1; r < world; ++r) {
        if (!note_of(r).empty()) continue;
        std::int64_t beat = 0;
        {
          Request request(*this);
          beat = store_->add(beat_key(r), 0);
        }
        if (beat != last[r]) {
          last[r] = beat;
          moved[r] = Clock::now();
        }
        if (Clock::now() - moved[r] < silent_after) ++unsettled;
      }
      if (unsettled == 0) break;
      std::this_thread::sleep_for(options_.interval / 4);
    }
  } catch (const std::exception&) {
    return;
  }
  // The last ranks to note their failure read the verdict right after.
  std::this_thread::sleep_for(options_.interval / 2);
}

}  // namespace ddp::detail
