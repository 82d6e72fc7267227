#include "peer_watch.hpp"

#include <poll.h>
#include <sys/random.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <sstream>

#include <torch/csrc/distributed/c10d/Store.hpp>

#include "ddp/error.hpp"
#include "rendezvous.hpp"
#include "torch_compat.hpp"

namespace ddp::detail {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// Rank 0 stays this long at most after a verdict, while ranks keep reading it.
constexpr auto kVerdictLinger = std::chrono::seconds(10);

std::uint64_t random_token() {
  std::uint64_t token = 0;
  if (getrandom(&token, sizeof token, 0) == static_cast<ssize_t>(sizeof token)) return token;
  std::random_device seed;  // a kernel without getrandom(2)
  return (std::uint64_t{seed()} << 32) ^ seed();
}

std::string ranks_text(const std::vector<int>& ranks) {
  std::string s;
  for (std::size_t i = 0; i < ranks.size() && i < 8; ++i) s += (i ? ", " : "") + std::to_string(ranks[i]);
  if (ranks.size() > 8) s += " and " + std::to_string(ranks.size() - 8) + " more";
  return s;
}

}  // namespace

PeerWatch::PeerWatch(Rendezvous& met, PeerWatchOptions options)
    : context_(met.context()),
      options_(options),
      host_(met.host()),
      rank0_host_(met.context().master_addr),
      started_(Clock::now()) {
  // Several beats within the peer time-out, whatever it is: a rank is lost only after several
  // missed, never after one late.
  options_.interval = std::min(options_.interval, std::max(options_.peer_timeout / 4, milliseconds(100)));
  c10d::Store& store = *met.native_->store;
  // Each watch on this rendezvous has its own key: a second process group must not find the
  // first one's port.
  const std::string key = std::string(kHeartbeatKey) + "/" + std::to_string(met.watches_++);
  const std::string who = "rank " + std::to_string(context_.rank);
  std::string value;
  try {
    if (context_.rank == 0) {
      if (const auto why = udp_.listen(0)) throw Error(who + " could not open its heartbeat socket (UDP): " + *why);
      token_ = random_token();
      hub_.emplace(context_.world_size, options_.interval, options_.peer_timeout, started_);
      rank0_host_ = host_;
      value = std::to_string(udp_.local_port()) + " " + std::to_string(token_) + " " + host_;
      store.set(key, std::vector<std::uint8_t>(value.begin(), value.end()));
    } else {
      // Rank 0 listens once its own process group is built, which may take as long as ours.
      store.wait({key}, options_.connect_timeout);
      const auto got = store.get(key);
      value.assign(got.begin(), got.end());
    }
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Error(who + " could not find rank 0's heartbeat port (" + key + " in the rendezvous store at " +
                context_.master_addr + ":" + std::to_string(context_.master_port) + "): " + compat::message_of(e));
  }
  if (context_.rank != 0) {
    std::istringstream in(value);
    unsigned port = 0;
    in >> port >> token_ >> rank0_host_;
    if (!in || port == 0 || port > 65535)
      throw Error(who + ": rank 0's heartbeat port in the rendezvous store is unreadable: '" + value + "'");
    if (const auto why = udp_.aim(context_.master_addr, port))
      throw Error(who + " could not aim its heartbeat at rank 0 (" + context_.master_addr + ", UDP port " +
                  std::to_string(port) + "): " + *why);
  }
  next_look_ = suspects_at_ = started_;
  // run() wakes at least once an interval (rank 0's four times): a wake more than two intervals
  // after the one before is a gap. Shorter delays lose no beat that matters (the socket keeps
  // them, and a rank is silent only after several), and discounting them would slow every
  // judgement of a rank 0 that is merely busy.
  gaps_ = GapDetector(options_.interval + milliseconds(1));
  if (!hub_) first_contact();
  // The ranks' beats spread over the interval rather than arriving at rank 0 all at once.
  next_beat_ = Clock::now() + spread(options_.interval, 0);
  thread_ = std::thread([this] { run(); });
}

// The first beat, until rank 0 answers it: a rank that returned from the process group's set-up is
// known to rank 0, and judged, even if it is lost a moment later. A few seconds at most (rank 0's
// answers may be filtered on the way: then a warning says so later).
void PeerWatch::first_contact() {
  const auto until = started_ + std::clamp(options_.peer_timeout, milliseconds(1000), milliseconds(5000));
  for (auto now = started_; now < until; now = Clock::now()) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (answered_ever_) return;
      send_beat();
    }
    pollfd p{udp_.fd(), POLLIN, 0};
    (void)::poll(&p, 1, 100);
    read_answers(Clock::now());
  }
}

// This rank's place in `over`, the same on every call with the same `salt`, different between
// ranks: what thousands of ranks do at one moment, each does at its own point of the span.
milliseconds PeerWatch::spread(milliseconds over, std::uint64_t salt) const {
  const std::uint64_t at = (static_cast<std::uint64_t>(context_.rank) * 7919 + salt * 104729) % 1000;
  return over * static_cast<long long>(at) / 1000;
}

PeerWatch::~PeerWatch() {
  bool finished;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    finished = finished_;
  }
  if (!finished) leave();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::uint64_t PeerWatch::beats_heard() {
  std::lock_guard<std::mutex> lock(mutex_);
  return hub_ ? hub_->beats() : 0;
}

Beat PeerWatch::own_beat() const {
  Beat b;
  b.token = token_;
  b.rank = static_cast<std::uint32_t>(context_.rank);
  b.world = static_cast<std::uint32_t>(context_.world_size);
  b.state = state_;
  b.heard_verdict = heard_verdict_;
  b.census = census_seen_;
  b.wants = wants_;
  b.host = host_;
  return b;
}

void PeerWatch::send_beat() {
  if (refused_) return;
  if (!udp_.send_to_head(encode(own_beat()))) was_refused(Clock::now());
}

// Rank 0's port refused a beat. After it answered: its process ended (if the others still need
// it, their collectives fail and explain() says so; if not, nothing is wrong). Before: a firewall
// rejects UDP on the way, which blames nobody.
void PeerWatch::was_refused(Clock::time_point now) {
  if (answered_ever_) {
    refused_ = true;
    changed_.notify_all();
    return;
  }
  warn_unanswered(now, "was refused (ICMP port unreachable)");
}

void PeerWatch::warn_unanswered(Clock::time_point now, const char* how) {
  if (warned_) return;
  warned_ = true;
  std::fprintf(stderr,
               "[rank %d/%d] warning: libddp's heartbeat to rank 0 (on %s, UDP) %s after %s s: UDP between "
               "the nodes is filtered, or rank 0 is stuck; lost ranks are then found only through "
               "failed collectives\n",
               context_.rank, context_.world_size, rank0_host_.c_str(), how,
               seconds_text(std::chrono::duration_cast<milliseconds>(now - started_)).c_str());
  std::fflush(stderr);
}

void PeerWatch::note(RankState state) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (state_ == RankState::Running || (state_ == RankState::Failed && state == RankState::Done)) state_ = state;
  if (hub_) {
    hub_->heard(own_beat(), Clock::now());
    return;
  }
  send_beat();
}

// A note that must reach rank 0 before this rank ends: sent again until rank 0's answer shows the
// note that stands, for at most `at_most` (rank 0 may be gone).
void PeerWatch::wait_recorded(milliseconds at_most) {
  if (hub_) return;  // rank 0's own table has it already
  const auto until = Clock::now() + at_most;
  std::unique_lock<std::mutex> lock(mutex_);
  while (recorded_ != state_ && answered_ever_ && !refused_ && Clock::now() < until) {
    changed_.wait_for(lock, std::min<Clock::duration>(options_.interval / 5, until - Clock::now()));
    if (recorded_ != state_) send_beat();
  }
}

void PeerWatch::leave() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (left_) return;
    left_ = true;
  }
  note(RankState::Left);
  wait_recorded(options_.interval);
}

void PeerWatch::finish() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (finished_) return;
    finished_ = true;  // the thread stops beating, and stops judging rank 0
  }
  // A census after this counts the rank as finished, not absent.
  note(RankState::Done);
  wait_recorded(std::max(options_.interval * 2, milliseconds(2000)));
}

std::optional<std::string> PeerWatch::verdict() {
  std::lock_guard<std::mutex> lock(mutex_);
  return report_;
}

void PeerWatch::found(const std::string& report, Clock::time_point now) {
  if (report_) return;
  report_ = report;
  report_at_ = now;
  changed_.notify_all();
}

std::string PeerWatch::rank0_lost(const std::string& detail) const {
  if (context_.rank == 0)
    return "the heartbeat this rank serves stopped (" + detail + "): this process is starved or stopped";
  return "lost contact with rank 0 of " + std::to_string(context_.world_size) + " (on " + rank0_host_ +
         "), which serves the rendezvous store: it ended, was killed, or its node or network failed (" + detail + ")";
}

std::optional<std::string> PeerWatch::explain() {
  const auto asked = Clock::now();
  std::unique_lock<std::mutex> lock(mutex_);
  if (!explained_) report_at_ = asked;  // the program knows now: its grace starts
  explained_ = true;
  if (!report_ && refused_) found(rank0_lost("its heartbeat port refused this rank's beat: its process ended"), asked);
  // Rank 0 never answered this rank (UDP filtered on the way, a warning said so): it cannot tell,
  // and blames nobody.
  if (!report_ && (hub_ || answered_ever_)) {
    if (state_ == RankState::Running) state_ = RankState::Failed;
    // A census that began before this rank asked says nothing of a loss just after it.
    wants_ = census_seen_ + 1;
    if (hub_) {
      hub_->heard(own_beat(), asked);
    } else {
      // After a lost rank every other rank's collective fails at once, and thousands of requests
      // at one instant would overflow rank 0's queue: the ranks ask spread over half an interval,
      // and a census that began meanwhile needs no asking.
      changed_.wait_for(lock, spread(options_.interval / 2, 0), [&] { return census_seen_ >= wants_ || stop_; });
      if (census_seen_ < wants_) send_beat();
    }
    // A census in progress, then this one: 10 intervals each at most. A rank 0 that stops
    // answering meanwhile is found by the watch's own judgement (the peer time-out), as ever.
    const auto until = asked + std::max(options_.peer_timeout, options_.interval * 21) + std::chrono::seconds(5);
    changed_.wait_until(lock, until, [&] { return report_ || clear_seen_ >= wants_ || refused_ || stop_; });
    if (!report_ && refused_)
      found(rank0_lost("its heartbeat port refused this rank's beat: its process ended"), Clock::now());
  }
  const auto report = report_;
  const bool linger = report && hub_ && !lingered_;
  lingered_ = lingered_ || linger;
  lock.unlock();
  if (linger) serve_verdict();
  return report;
}

void PeerWatch::serve_verdict() {
  // Rank 0 answers the heartbeats: if it ended now, ranks whose collectives fail a moment later
  // (the failure spreads rank by rank) could no longer hear the verdict and would only find rank
  // 0 gone. Stay while ranks that still beat have not heard it, for a while.
  const auto start = Clock::now();
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_ && Clock::now() - start < kVerdictLinger && hub_->yet_to_hear(Clock::now()) > 0)
    changed_.wait_for(lock, options_.interval / 4);
}

void PeerWatch::run() {
  // From the start: a job suspended during the first wait is a gap too.
  (void)gaps_.update(Clock::now());
  for (;;) {
    auto now = Clock::now();
    Clock::time_point wake;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (stop_) return;
      // Twice as often while rank 0 has not yet taken what this rank must tell it: that it wants a
      // census, or its answer to one. A rank waiting for a census' end beats as usual.
      const bool busy = wants_ > census_seen_ || (census_open_ && counted_ < census_seen_);
      if (!hub_ && now >= next_beat_) {
        // A finished rank beats no more, unless a failed shutdown asks it for a census.
        if (!finished_ || wants_ > clear_seen_) send_beat();
        next_beat_ = now + (busy ? options_.interval / 2 : options_.interval);
      }
      wake = hub_ ? std::min(next_look_, now + options_.interval / 4) : std::min(next_beat_, now + options_.interval);
    }
    pollfd p{udp_.fd(), POLLIN, 0};
    const auto wait = std::chrono::duration_cast<milliseconds>(wake - now).count();
    (void)::poll(&p, 1, static_cast<int>(std::max<long long>(wait, 0) + 1));
    now = Clock::now();
    // Before the beats that came meanwhile are read: they are stamped now, the ones the socket
    // dropped are not.
    discount(gaps_.update(now));
    if (hub_) {
      serve(now);
      unwedge_store(now);
    } else {
      read_answers(now);
      judge_rank0(now);
    }
    end_if_past_grace(now);
  }
}

void PeerWatch::serve(Clock::time_point now) {
  char buf[kMaxHeartbeatDatagram + 1];
  net::Address from;
  std::lock_guard<std::mutex> lock(mutex_);
  // Every datagram waiting, each answered at once: what the kernel's queue drops is a beat lost.
  for (int taken = 0; taken < 4 * context_.world_size + 64; ++taken) {
    const auto size = udp_.receive(buf, sizeof buf, from);
    if (!size) break;
    if (*size > kMaxHeartbeatDatagram) continue;
    const auto beat = decode_beat(std::string_view(buf, *size), token_, static_cast<std::uint32_t>(context_.world_size));
    if (!beat || beat->rank == 0) continue;
    hub_->heard(*beat, now);
    udp_.send(from, encode(hub_->answer_for(beat->rank, token_)));
  }
  if (now < next_look_) return;
  next_look_ = now + options_.interval / 4;
  // Rank 0's own beat, then the judgement.
  census_seen_ = hub_->answer_for(0, token_).census;
  hub_->heard(own_beat(), now);
  hub_->look(now);
  const BeatAnswer mine = hub_->answer_for(0, token_);
  census_open_ = mine.census_open;
  clear_seen_ = mine.clear;
  if (hub_->verdict()) {
    heard_verdict_ = true;
    found(*hub_->verdict(), now);
  }
  changed_.notify_all();
  // Once, when the ranks have had time to beat (twice the peer time-out): who never did.
  if (!warned_ && now - started_ >= options_.peer_timeout * 2) {
    warned_ = true;
    const auto never = hub_->never_heard(now, options_.peer_timeout * 2);
    if (!never.empty()) {
      std::fprintf(stderr,
                   "[rank 0/%d] warning: %zu of %d ranks never reached libddp's heartbeat (UDP port %u on %s) "
                   "in %s s: ranks %s. UDP to this node is filtered on their way, or they are stuck "
                   "before their process group; they are judged by their collectives' errors alone\n",
                   context_.world_size, never.size(), context_.world_size, udp_.local_port(), host_.c_str(),
                   seconds_text(std::chrono::duration_cast<milliseconds>(now - started_)).c_str(),
                   ranks_text(never).c_str());
      std::fflush(stderr);
    }
  }
}

void PeerWatch::read_answers(Clock::time_point now) {
  char buf[kMaxHeartbeatDatagram + 1];
  net::Address from;
  std::lock_guard<std::mutex> lock(mutex_);
  bool refused = false;
  const std::uint64_t census_before = census_seen_;
  for (;;) {
    const auto size = udp_.receive(buf, sizeof buf, from, &refused);
    if (!size) break;
    if (*size > kMaxHeartbeatDatagram) continue;
    const auto a = decode_answer(std::string_view(buf, *size), token_, static_cast<std::uint32_t>(context_.world_size),
                                 static_cast<std::uint32_t>(context_.rank));
    if (!a) continue;
    answered_ever_ = true;
    answered_at_ = now;
    recorded_ = a->recorded;
    counted_ = std::max(counted_, a->counted);
    census_seen_ = std::max(census_seen_, a->census);
    census_open_ = a->census_open;
    clear_seen_ = std::max(clear_seen_, a->clear);
    if (!a->verdict.empty()) {
      if (!heard_verdict_) next_beat_ = now;  // rank 0 counts who heard it
      heard_verdict_ = true;
      found(a->verdict, now);
    }
  }
  if (refused) was_refused(now);
  // A new census is answered at once, the ranks spread over half an interval: thousands of
  // answers at one instant would overflow rank 0's queue.
  if (census_seen_ > census_before) next_beat_ = now + spread(options_.interval / 2, census_seen_);
  changed_.notify_all();
}

void PeerWatch::judge_rank0(Clock::time_point now) {
  std::lock_guard<std::mutex> lock(mutex_);
  // A finished rank no longer beats: rank 0's silence is no news.
  if (report_ || refused_ || finished_) return;
  if (answered_ever_) {
    if (now - answered_at_ > options_.peer_timeout)
      found(rank0_lost("no answer to its heartbeat for " + seconds_text(options_.peer_timeout) +
                       " s (DDP_PEER_TIMEOUT)"),
            now);
    return;
  }
  if (now - started_ > options_.peer_timeout) warn_unanswered(now, "got no answer");
}

// Suspended with the job (every rank's watch stopped too), stopped or starved: the time away is
// nobody's silence, rank 0's to a rank, every rank's to rank 0. A rank that stays silent after it
// is found a peer time-out later, as ever.
void PeerWatch::discount(milliseconds gap) {
  if (gap <= milliseconds(0)) return;
  std::lock_guard<std::mutex> lock(mutex_);
  started_ += gap;
  if (hub_)
    hub_->discount(gap);
  else
    answered_at_ += gap;
}

void PeerWatch::end_if_past_grace(Clock::time_point now) {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto grace = explained_ ? options_.explained_grace : options_.exit_grace;
  if (!report_ || grace.count() == 0 || now - report_at_ < grace) return;
  std::fprintf(stderr,
               "[rank %d/%d] error: %s. Its collectives cannot complete; ending this "
               "process (%s s after the loss was known)\n",
               context_.rank, context_.world_size, report_->c_str(), seconds_text(grace).c_str());
  std::fflush(stderr);
  std::_Exit(EXIT_FAILURE);
}

// A client of rank 0's store that vanished halfway through a request holds the classic server
// (store_wedge.hpp): every rank's requests wait, the program's too. Rank 0 looks for such a read
// now and then (reading /proc for its own threads) and drops that client, so that the store
// answers the others again.
void PeerWatch::unwedge_store(Clock::time_point now) {
  // Half the peer time-out: far beyond TCP's retransmissions of a healthy client's request.
  const auto step = std::max(options_.peer_timeout, milliseconds(1000)) / 2;
  if (now - suspects_at_ < step) return;
  auto reads = store_reads(context_.master_port);
  for (const auto& read : stuck_reads(suspects_, reads)) {
    if (!drop_connection(read)) continue;
    std::fprintf(stderr,
                 "[rank 0/%d] warning: the rendezvous store this rank serves waited over %s s "
                 "for the rest of a request from %s (its node or network failed mid-request); "
                 "closed that connection so the store answers the other ranks again\n",
                 context_.world_size, seconds_text(std::chrono::duration_cast<milliseconds>(step)).c_str(),
                 read.peer.c_str());
    std::fflush(stderr);
  }
  suspects_ = std::move(reads);
  suspects_at_ = now;
}

}  // namespace ddp::detail
