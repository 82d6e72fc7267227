#include "judge.hpp"

#include <algorithm>

namespace ddp::watch {

Judge::Judge(JudgeConfig config, Now start)
    : config_(config), nodes_(std::max(1u, config.nodes)), liveness_(nodes_.size()) {
  // The head hears itself: its own node is never silent.
  liveness_.heard(0, start.mono);
  liveness_.ended(0);
}

void Judge::heard(unsigned node, const std::string& host, const std::string& ranks, Now now) {
  if (node >= nodes_.size() || node == 0) return;
  NodeState& n = nodes_[node];
  liveness_.heard(node, now.mono);
  n.last_wall_ns = now.wall_ns;
  if (!host.empty()) n.host = host;
  if (!ranks.empty()) n.ranks = ranks;
}

void Judge::failed(const Failure& f, Now now) {
  if (decided_ || f.node >= nodes_.size()) return;
  // A failure told twice (a lost ack) counts once.
  for (const Failure& known : failures_)
    if (known.rank == f.rank && known.how == f.how) return;
  failures_.push_back(f);
  first_reported(now);
}

void Judge::reported(unsigned node, const Failure& first, const FailureCounts& counts, Now now) {
  if (decided_ || node == 0 || node >= nodes_.size()) return;
  unsigned total = 0;
  for (const auto& [how, n] : counts) total += n;
  Report& r = reports_[node];
  if (total < std::max(1u, r.total)) return;
  r.first = first;
  r.first.node = node;
  r.counts = counts;
  r.total = total;
  first_reported(now);
}

void Judge::first_reported(Now now) {
  if (!first_report_) first_report_ = now.mono;
}

void Judge::done(unsigned node) {
  if (node != 0) liveness_.ended(node);
}

void Judge::discount(Ms gap) {
  liveness_.discount(gap);
  if (last_drop_) *last_drop_ += gap;
}

unsigned Judge::heard_count() const { return static_cast<unsigned>(liveness_.heard_count()); }

bool Judge::heard_all_done(Now now) const { return liveness_.all_quiet_for(now.mono, config_.timeout); }

std::optional<Verdict> Judge::from_failures() {
  std::vector<const Failure*> candidates;
  for (const Failure& f : failures_) candidates.push_back(&f);
  for (const auto& [node, r] : reports_) candidates.push_back(&r.first);
  if (candidates.empty()) return std::nullopt;
  const Failure* first = candidates[root_cause(candidates, config_.simultaneous_ns)];
  Verdict v;
  v.first = *first;
  for (const Failure& f : failures_)
    if (&f != first) ++v.also[how_short(f)];
  for (const auto& [node, r] : reports_)
    for (const auto& [how, n] : r.counts) {
      const unsigned others = &r.first == first && how == how_short(r.first) ? n - 1 : n;
      if (others > 0) v.also[how] += others;
    }
  return v;
}

void Judge::dropped(Now now) { last_drop_ = now.mono; }

std::optional<Verdict> Judge::from_silence(Now now) {
  if (last_drop_ && now.mono - *last_drop_ <= config_.timeout) return std::nullopt;
  // The node silent longest is named; the others are counted.
  const auto silent = liveness_.quiet_for(now.mono, config_.timeout);
  if (silent.empty()) return std::nullopt;
  const auto index = static_cast<unsigned>(silent.front());
  const NodeState* longest = &nodes_[index];
  Verdict v;
  Failure& f = v.first;
  f.how = How::Silent;
  f.node = index;
  f.host = longest->host;
  f.ranks = longest->ranks;
  f.at_ns = longest->last_wall_ns;
  f.seconds = static_cast<unsigned>(
      std::chrono::duration_cast<std::chrono::seconds>(now.mono - liveness_.last(index)).count());
  v.other_silent_nodes = static_cast<unsigned>(silent.size() - 1);
  v.unreachable = true;
  return v;
}

std::optional<Verdict> Judge::verdict(Now now) {
  if (decided_) return std::nullopt;
  std::optional<Verdict> v;
  if (first_report_ && now.mono - *first_report_ >= config_.settle) v = from_failures();
  // A silent node decides alone only when no failure is pending: that one names the cause, and
  // the node's silence is most likely its consequence (or is said as one of the others).
  if (!first_report_) v = from_silence(now);
  if (v) {
    if (const auto silent = first_report_ ? from_silence(now) : std::nullopt) {
      v->unreachable = true;
      v->other_silent_nodes += 1 + silent->other_silent_nodes;
    }
    decided_ = true;
  }
  return v;
}

Clock::time_point Judge::next_check(Now now) const {
  if (decided_) return Clock::time_point::max();
  if (first_report_) return *first_report_ + config_.settle;
  Clock::time_point next = liveness_.next_quiet(config_.timeout);
  if (last_drop_ && next != Clock::time_point::max()) next = std::max(next, *last_drop_ + config_.timeout + Ms(1));
  (void)now;
  return next;
}

}  // namespace ddp::watch
