#include "peer_watch.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>
#include <vector>

#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include "ddp/error.hpp"
#include "missing_ranks.hpp"
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
// One counter every tick reads: the censuses started so far, plus kVerdictMark once a verdict is
// in kLostKey. A rank answers each census it sees start; a verdict ends every rank's watch.
constexpr const char* kAlarmKey = "ddp/alarm";
constexpr std::int64_t kVerdictMark = std::int64_t{1} << 40;
constexpr const char* kCensusesOverKey = "ddp/census/over";  // censuses that found every rank
constexpr const char* kDoneCountKey = "ddp/done";  // ranks that finished cleanly
constexpr const char* kHeardKey = "ddp/heard";     // ranks that read the verdict
constexpr auto kVerdictLinger = std::chrono::seconds(10);
constexpr int kCensusAttempts = 3;  // counters lost mid-count before a census gives up

std::string beat_key(int rank) { return "ddp/beat/" + std::to_string(rank); }
std::string note_key(int rank) { return "ddp/note/" + std::to_string(rank); }
// Census `round` (one after each census that found every rank) has attempts: the next one starts
// when the rank counting the last was lost mid-count. Each attempt counts under its own number
// from kAlarmKey.
std::string attempt_key(std::int64_t round, int attempt, const char* what) {
  return "ddp/census/" + std::to_string(round) + "/" + std::to_string(attempt) + "/" + what;
}
std::string answer_key(std::int64_t census, int rank) {
  return "ddp/answer/" + std::to_string(census) + "/" + std::to_string(rank);
}
std::string answers_key(std::int64_t census) { return "ddp/answers/" + std::to_string(census); }

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
    store_ = first_answer({}, context.rank, Clock::now(), o.timeout,
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

std::string PeerWatch::set_note_once(const std::string& note) {
  Request request(*this);
  // compareSet against "nothing yet": the first note a rank leaves is the true one (a victim that
  // then exits stays a victim).
  return text(store_->compareSet(note_key(context_.rank), {}, bytes(note)));
}

std::string PeerWatch::publish(const std::string& report) {
  Request request(*this);
  // The first rank to find a loss speaks for all, so every rank prints the same cause.
  const std::string verdict = text(store_->compareSet(kLostKey, {}, bytes(report)));
  store_->add(kAlarmKey, kVerdictMark);
  return verdict;
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
    // A census after this counts the rank as finished, not absent.
    if (set_note_once(kDone) == kDone) {
      Request request(*this);
      store_->add(kDoneCountKey, 1);
      // A census still counting must not count this rank twice, as done and as an answer.
      if (answered_ > 0) store_->add(answers_key(answered_), -1);
      done_counted_ = true;
    }
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
  watch_.request_since_ = watch_.last_request_at_ = Clock::now().time_since_epoch().count();
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
  if (store_closed_ || heard_) return;
  std::optional<std::string> found;
  try {
    std::int64_t alarm = 0;
    {
      Request request(*this);
      store_->add(beat_key(context_.rank), 1);
      alarm = store_->add(kAlarmKey, 0);
    }
    if (alarm >= kVerdictMark)
      found = read_verdict();
    else
      answer(alarm);
    const int next = (context_.rank + 1) % context_.world_size;
    if (!found) {
      std::int64_t beat = 0;
      {
        Request request(*this);
        beat = store_->add(beat_key(next), 0);
      }
      // Only a silent neighbour is lost. One that left a note ended on purpose or is failing
      // already: if the others still need it, their collectives fail and the census names it.
      // The note is asked for only once the beat stopped, and kept (a rank notes once): 3
      // requests a tick instead of 4, which rank 0's store answers for every rank every interval.
      if (beat != neighbour_beat_) {
        neighbour_beat_ = beat;
        neighbour_moved_ = Clock::now();
      } else if (Clock::now() - neighbour_moved_ > silence_allowed() && !neighbour_noted(next)) {
        // Silent for good. Its node's other ranks likely are too: the census names all of them.
        found = census("stopped responding: no heartbeat for " + seconds_text(options_.peer_timeout) +
                       " s (DDP_PEER_TIMEOUT); it hangs, was stopped, or its node or network failed");
        neighbour_moved_ = Clock::now();  // every rank answered: not again before its time
      }
    }
  } catch (const std::exception& e) {
    // A store that does not answer within the time-out: rank 0 is frozen or cut off, and
    // collectives with it will hang. One that closed at once: rank 0's process ended; if the
    // others still need it their collectives fail by themselves, and if not nothing is wrong.
    if (Clock::now() - Clock::time_point(Clock::duration(last_request_at_.load())) >= store_timeout_ * 9 / 10)
      found = rank0_lost(compat::message_of(e));
    else
      store_closed_ = true;
  }
  if (!found) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!report_) {
      report_ = found;
      report_at_ = Clock::now();
    }
  }
  wake_.notify_all();  // a census waiting on the program's thread
}

bool PeerWatch::neighbour_noted(int next) {
  if (!neighbour_noted_) neighbour_noted_ = !note_of(next).empty();
  return neighbour_noted_;
}

// A neighbour whose watch has not beaten yet (it beats once as soon as it is connected) may still
// be connecting, which takes longer with the job (thousands of ranks connecting to rank 0's
// store): judged as silent before then, it would be named lost, and every rank that found one
// would take a census. Once connected, it has the peer time-out.
std::chrono::milliseconds PeerWatch::silence_allowed() const {
  return neighbour_beat_ > 0 ? options_.peer_timeout : std::max(options_.peer_timeout, options_.connect_timeout);
}

std::optional<std::string> PeerWatch::read_verdict() {
  Request request(*this);
  if (!store_->check({kLostKey})) return std::nullopt;
  const std::string verdict = text(store_->get(kLostKey));
  if (!heard_.exchange(true)) store_->add(kHeardKey, 1);
  return verdict;
}

void PeerWatch::answer(std::int64_t alarm) {
  // Every census up to the newest: a slow counter's census may still run beside a newer attempt.
  // The tick and a census on the program's thread both answer: under the one connection's lock,
  // each census is answered once, or the count would pass the world with a rank still absent.
  while (answered_ < alarm % kVerdictMark) {
    Request request(*this);
    const std::int64_t census = answered_ + 1;
    // A rank that finished is counted in ddp/done instead (finish() took back its last answer).
    if (census > alarm % kVerdictMark || done_counted_) break;
    store_->set(answer_key(census, context_.rank), bytes("1"));
    store_->add(answers_key(census), 1);
    answered_ = census;
  }
}

// Every rank whose collective failed asks at once, and R ranks each asking about R others would
// be R² requests on rank 0's store. So the first to ask counts for all and the others answer and
// wait for its verdict, asking one key now and then; if it never finishes (it was lost itself,
// mid-count), the next attempt's counter counts again.
std::optional<std::string> PeerWatch::census(const std::string& silent_why) {
  // The rank and its thread: the watch's tick and the program's explain() may both ask at once.
  std::ostringstream token;
  token << context_.rank << "/" << std::this_thread::get_id();
  const std::string me = token.str();
  std::int64_t round = 0;
  {
    Request request(*this);
    round = store_->add(kCensusesOverKey, 0) + 1;
  }
  // A count that began before this rank asked and found every rank says nothing of a rank lost
  // just after it answered. Counting again is no cure: the ranks that heard "nothing" from the
  // first count end, note themselves failed, and a second count would name them as the cause.
  for (int attempt = 0; attempt < kCensusAttempts; ++attempt) {
    std::string counter;
    {
      Request request(*this);
      counter = text(store_->compareSet(attempt_key(round, attempt, "counter"), {}, bytes(me)));
    }
    if (counter == me) return count_absent(round, attempt, silent_why);
    // Its count: a few beats, then a few dozen requests.
    const auto until = Clock::now() + options_.interval * 9 / 2 + std::chrono::seconds(5);
    while (Clock::now() < until) {
      {
        std::unique_lock<std::mutex> lock(mutex_);
        if (wake_.wait_for(lock, options_.interval / 2, [this] { return report_.has_value() || stop_; }))
          return report_;
      }
      std::int64_t alarm = 0;
      bool over = false;
      {
        Request request(*this);
        store_->add(beat_key(context_.rank), 1);  // this may be the watch's own thread
        alarm = store_->add(kAlarmKey, 0);
        over = alarm >= kVerdictMark || store_->check({attempt_key(round, attempt, "done")});
      }
      // Its verdict, if any, was published before its done key: asked again, it is there now.
      if (over) return read_verdict();
      answer(alarm);  // this thread may be the one that answers (the watch's own census)
    }
  }
  return std::nullopt;  // its counters kept being lost: the collectives' own errors stand
}

std::optional<std::string> PeerWatch::count_absent(std::int64_t round, int attempt,
                                                   const std::string& silent_why) {
  const int world = context_.world_size;
  std::int64_t census = 0;
  {
    Request request(*this);
    census = store_->add(kAlarmKey, 1) % kVerdictMark;
  }
  answer(census);
  // Long enough for every live rank to tick twice, even on a loaded node; over sooner when every
  // rank answered or finished, but not before every live rank has had a tick to answer (a rank
  // that finishes while it is counted can be seen twice for a moment).
  const auto started = Clock::now();
  const auto until = started + options_.interval * 5 / 2;
  std::int64_t answered = 0, finished = 0;
  while (Clock::now() < until) {
    std::this_thread::sleep_for(options_.interval / 4);
    std::int64_t alarm = 0;
    {
      Request request(*this);
      store_->add(beat_key(context_.rank), 1);  // this may be the watch's own thread
      alarm = store_->add(kAlarmKey, 0);
      if (alarm < kVerdictMark) {
        answered = store_->add(answers_key(census), 0);
        finished = store_->add(kDoneCountKey, 0);
      }
    }
    if (alarm >= kVerdictMark) return read_verdict();  // another attempt's counter was quicker
    answer(alarm);  // a newer attempt's census, if this count is slow: this rank is not lost
    if (answered + finished >= world && Clock::now() - started >= options_.interval * 5 / 4) break;
  }
  // Ranks that finished are not absent, only quiet: the search passes them. Searched even when the
  // counts say nobody is absent: one rank they counted twice would hide one that is.
  std::map<int, std::string> notes;  // of the absent ranks the search visited
  const auto named = first_absent(
      world, [census](int r) { return answer_key(census, r); }, plan::kMaxNamedRanks,
      [this](const std::vector<std::string>& keys) {
        Request request(*this);
        return store_->check(keys);
      },
      [&](int r) { return (notes[r] = note_of(r)) != kDone; });
  // A rank that noted its collective's failure and is gone now ended by itself too.
  std::vector<int> left, silent;
  for (const int r : named) (notes[r] == kLeft || notes[r] == kFailed ? left : silent).push_back(r);
  {
    Request request(*this);  // the late answers are not absent either
    answered = store_->add(answers_key(census), 0);
    finished = store_->add(kDoneCountKey, 0);
  }
  std::string report;
  const std::size_t more = absent_not_named(named.size(), plan::kMaxNamedRanks, world, answered + finished);
  if (!left.empty())
    report = describe(left, silent.empty() ? more : 0, "ended before the others; its own output says why");
  if (!silent.empty()) report += (report.empty() ? "" : "; ") + describe(silent, more, silent_why);
  std::optional<std::string> verdict;
  if (!report.empty()) verdict = publish(report);
  Request request(*this);
  if (!verdict) store_->add(kCensusesOverKey, 1);
  store_->set(attempt_key(round, attempt, "done"), bytes("1"));
  return verdict;
}

std::string PeerWatch::describe(const std::vector<int>& ranks, std::size_t more, const std::string& what) {
  // A rack lost names its first ranks and counts the others: the verdict every rank prints, and
  // the store's host lookups behind it, must not grow with the job.
  const std::size_t named = std::min(ranks.size(), plan::kMaxNamedRanks);
  more += ranks.size() - named;
  std::string who;
  for (std::size_t i = 0; i < named; ++i)
    who += std::string(i == 0 ? "" : i + 1 == named && more == 0 ? " and " : ", ") + "rank " +
           std::to_string(ranks[i]) + " of " + std::to_string(context_.world_size) + " (on " +
           host_of(ranks[i]) + ")";
  if (more > 0) who += " and " + std::to_string(more) + " more ranks";
  return who + " " + what;
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
    report = census("stopped responding: it was killed, crashed, or its node or network failed");
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
  // gone. Stay while more ranks keep reading it, for a while.
  const auto start = Clock::now();
  std::int64_t heard = -1;
  auto moved = start;
  try {
    while (Clock::now() - start < kVerdictLinger && Clock::now() - moved < options_.interval * 5 / 2) {
      std::int64_t now_heard = 0;
      {
        Request request(*this);
        now_heard = store_->add(kHeardKey, 0);
      }
      if (now_heard != heard) {
        heard = now_heard;
        moved = Clock::now();
      }
      if (heard >= context_.world_size - 1) break;
      std::this_thread::sleep_for(options_.interval / 4);
    }
  } catch (const std::exception&) {
    return;
  }
  // The last ranks to note their failure read the verdict right after.
  std::this_thread::sleep_for(options_.interval / 2);
}

}  // namespace ddp::detail
