#include "beat_hub.hpp"

#include <algorithm>

#include "rank_places.hpp"
#include "rendezvous.hpp"

namespace ddp::detail {
namespace {

bool noted(RankState s) { return s == RankState::Failed || s == RankState::Left; }

}  // namespace

BeatHub::BeatHub(int world, std::chrono::milliseconds interval, std::chrono::milliseconds peer_timeout,
                 Clock::time_point start)
    : ranks_(static_cast<std::size_t>(world)),
      liveness_(ranks_.size()),
      interval_(interval),
      peer_timeout_(peer_timeout),
      start_(start) {}

void BeatHub::heard(const Beat& b, Clock::time_point now) {
  if (b.rank >= ranks_.size()) return;
  ++beats_;
  Rank& r = ranks_[b.rank];
  liveness_.heard(b.rank, now);
  if (r.host.empty()) r.host = b.host;
  // The first note stands; Done may follow Failed (a victim whose program caught the error and
  // finished) but nothing follows Done or Left.
  if (r.state == RankState::Running || (r.state == RankState::Failed && b.state == RankState::Done)) r.state = b.state;
  if (r.state != RankState::Running) liveness_.ended(b.rank);
  const std::uint64_t answered = std::max(r.answered, std::min(b.census, census_));
  if (census_open_ && answered == census_ && r.answered < census_) census_heard_at_ = now;
  r.answered = answered;
  if (b.heard_verdict && !r.heard_verdict && verdict_) {
    r.heard_verdict = true;
    if (b.rank != 0) ++heard_verdict_;
  }
  if (b.wants > wanted_) wanted_ = b.wants;
}

void BeatHub::begin_census(Clock::time_point now) {
  ++census_;
  census_open_ = true;
  census_began_ = census_heard_at_ = now;
}

void BeatHub::look(Clock::time_point now) {
  if (verdict_) return;
  if (census_open_) {
    // 2.5 intervals, for every live rank to hear of it and answer; longer while answers still
    // come (a loaded rank 0 takes them late), up to 10.
    const auto open = now - census_began_;
    const bool over = (open >= interval_ * 5 / 2 && now - census_heard_at_ >= interval_) || open >= interval_ * 10;
    bool all = true;
    for (std::size_t i = 0; i < ranks_.size() && all; ++i) {
      const Rank& r = ranks_[i];
      all = !liveness_.ever(i) || r.state == RankState::Done || r.state == RankState::Left || r.answered >= census_;
    }
    if (all || over) end_census();
  }
  // A census that began before a rank asked says nothing of a loss just after it: the next one.
  if (!verdict_ && !census_open_ && wanted_ > census_) begin_census(now);
  if (verdict_) return;
  // Silent: Running and not heard for the peer time-out. Named with every rank quiet for three
  // intervals, which a live rank never is, in the order of their ranks.
  if (!liveness_.any_quiet_for(now, peer_timeout_)) return;
  std::vector<int> quiet;
  for (const std::size_t i : liveness_.quiet_for(now, std::min(interval_ * 3, peer_timeout_)))
    quiet.push_back(static_cast<int>(i));
  std::sort(quiet.begin(), quiet.end());
  decide({}, quiet,
         "stopped responding: no heartbeat for " + seconds_text(peer_timeout_) +
             " s (DDP_PEER_TIMEOUT); it hangs, was stopped, or its node or network failed");
}

void BeatHub::end_census() {
  census_open_ = false;
  std::vector<int> left, lost;
  for (std::size_t i = 0; i < ranks_.size(); ++i) {
    const Rank& r = ranks_[i];
    // A rank that noted it is leaving is absent whether its watch still answers or not.
    if (!liveness_.ever(i) || r.state == RankState::Done || (r.state != RankState::Left && r.answered >= census_)) continue;
    (noted(r.state) ? left : lost).push_back(static_cast<int>(i));
  }
  if (left.empty() && lost.empty()) {
    clear_ = census_;
    return;
  }
  decide(left, lost, "stopped responding: it was killed, crashed, or its node or network failed");
}

void BeatHub::decide(const std::vector<int>& left, const std::vector<int>& lost, const std::string& lost_why) {
  if (left.empty() && lost.empty()) return;
  // At most kMaxNamedRanks named in all, the ranks that ended on their own first (each says why in
  // its own output), the rest counted: the verdict every rank prints must not grow with the job,
  // and it travels in one datagram.
  const std::size_t cap = plan::kMaxNamedRanks;
  const std::size_t left_named = std::min(left.size(), cap);
  const std::size_t lost_named = std::min(lost.size(), cap - left_named);
  std::string report;
  if (!left.empty()) report = describe(left, left_named, "ended before the others; its own output says why");
  if (lost_named > 0)
    report += (report.empty() ? "" : "; ") + describe(lost, lost_named, lost_why);
  else if (!lost.empty())
    report += "; " + std::to_string(lost.size()) + " more ranks " + lost_why;
  verdict_ = report;
}

std::string BeatHub::describe(const std::vector<int>& ranks, std::size_t named, const std::string& what) const {
  const std::size_t more = ranks.size() - named;
  const std::string world = std::to_string(ranks_.size());
  std::string who;
  for (std::size_t i = 0; i < named; ++i) {
    const std::string& host = ranks_[static_cast<std::size_t>(ranks[i])].host;
    who += std::string(i == 0 ? "" : i + 1 == named && more == 0 ? " and " : ", ") + "rank " +
           std::to_string(ranks[i]) + " of " + world + " (on " + (host.empty() ? "an unknown node" : host) + ")";
  }
  if (more > 0) who += " and " + std::to_string(more) + " more ranks";
  return who + " " + what;
}

void BeatHub::discount(std::chrono::milliseconds gap) {
  if (gap <= std::chrono::milliseconds(0)) return;
  liveness_.discount(gap);
  start_ += gap;
  census_began_ += gap;
  census_heard_at_ += gap;
}

BeatAnswer BeatHub::answer_for(std::uint32_t rank, std::uint64_t token) const {
  BeatAnswer a;
  a.token = token;
  a.rank = rank;
  a.world = static_cast<std::uint32_t>(ranks_.size());
  if (rank < ranks_.size()) {
    a.recorded = ranks_[rank].state;
    a.counted = ranks_[rank].answered;
  }
  a.census = census_;
  a.census_open = census_open_;
  a.clear = clear_;
  if (verdict_) a.verdict = *verdict_;
  return a;
}

std::vector<int> BeatHub::never_heard(Clock::time_point now, std::chrono::milliseconds allowed) const {
  std::vector<int> never;
  if (now - start_ < allowed) return never;
  for (std::size_t i = 0; i < ranks_.size(); ++i)
    if (!liveness_.ever(i)) never.push_back(static_cast<int>(i));
  return never;
}

int BeatHub::running() const {
  int n = 0;
  for (const Rank& r : ranks_)
    if (r.state != RankState::Done) ++n;
  return n;
}

int BeatHub::yet_to_hear(Clock::time_point now) const {
  int n = 0;
  for (std::size_t i = 1; i < ranks_.size(); ++i) {
    const Rank& r = ranks_[i];
    if (liveness_.ever(i) && !r.heard_verdict && r.state != RankState::Done && now - liveness_.last(i) <= interval_ * 3)
      ++n;
  }
  return n;
}

}  // namespace ddp::detail
