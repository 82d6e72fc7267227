#include "liveness.hpp"

namespace ddp {

void Liveness::heard(std::size_t member, Clock::time_point now) {
  if (member >= members_.size()) return;
  Member& m = members_[member];
  if (judged(m)) by_last_.erase({m.last, member});
  if (!m.ever) ++heard_count_;
  m.ever = true;
  m.last = now;
  if (judged(m)) by_last_.insert({m.last, member});
}

void Liveness::ended(std::size_t member) {
  if (member >= members_.size()) return;
  Member& m = members_[member];
  if (judged(m)) by_last_.erase({m.last, member});
  m.ended = true;
}

// Rare (the watcher was stopped or starved): every member moves by the same gap, so the order stays.
void Liveness::discount(Ms gap) {
  if (gap <= Ms(0)) return;
  for (Member& m : members_)
    if (m.ever) m.last += gap;
  std::set<std::pair<Clock::time_point, std::size_t>> moved;
  for (const auto& [last, member] : by_last_) moved.emplace_hint(moved.end(), last + gap, member);
  by_last_ = std::move(moved);
}

bool Liveness::any_quiet_for(Clock::time_point now, Ms quiet) const {
  return !by_last_.empty() && now - by_last_.begin()->first > quiet;
}

// The member heard last decides: if even it has been quiet that long, all of them have.
bool Liveness::all_quiet_for(Clock::time_point now, Ms quiet) const {
  return by_last_.empty() || now - by_last_.rbegin()->first > quiet;
}

std::vector<std::size_t> Liveness::quiet_for(Clock::time_point now, Ms quiet) const {
  std::vector<std::size_t> out;
  for (auto it = by_last_.begin(); it != by_last_.end() && now - it->first > quiet; ++it) out.push_back(it->second);
  return out;
}

Liveness::Clock::time_point Liveness::next_quiet(Ms quiet) const {
  return by_last_.empty() ? Clock::time_point::max() : by_last_.begin()->first + quiet + Ms(1);
}

}  // namespace ddp
