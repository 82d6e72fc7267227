#include "member.hpp"

#include <algorithm>

namespace ddp::watch {

Member::Member(MemberConfig config, Now start) : config_(std::move(config)), next_beat_(start.mono) {}

void Member::set_ranks(std::string ranks) { config_.ranks = std::move(ranks); }

void Member::heard_head(Now now) {
  // From the first answer on, the beats keep this node's own phase.
  if (!head_heard_) next_beat_ = now.mono + config_.phase;
  head_heard_ = true;
  last_heard_ = now.mono;
}

void Member::acked(std::uint64_t id) {
  pending_.erase(std::remove_if(pending_.begin(), pending_.end(),
                                [id](const Pending& p) { return p.d.id == id; }),
                 pending_.end());
}

std::uint64_t Member::send_reliably(Datagram d, Now now) {
  d.node = config_.node;
  d.id = next_id_++;
  // Sent at the next due(): first_sent counts from now, last_sent long ago.
  pending_.push_back({std::move(d), now.mono, Clock::time_point{}});
  return pending_.back().d.id;
}

std::vector<Datagram> Member::due(Now now) {
  std::vector<Datagram> out;
  if (now.mono >= next_beat_) {
    Datagram beat;
    beat.type = Datagram::Type::Beat;
    beat.node = config_.node;
    beat.host = config_.host;
    beat.ranks = config_.ranks;
    out.push_back(std::move(beat));
    // Until the head answers (it may start later than this node), beat often: the head learns
    // of every node within a second of its start.
    const Ms every = head_heard_ ? config_.interval : std::min(config_.interval, config_.resend * 2);
    next_beat_ = std::max(next_beat_ + every, now.mono);
  }
  for (Pending& p : pending_)
    if (now.mono - p.last_sent >= config_.resend) {
      out.push_back(p.d);
      p.last_sent = now.mono;
    }
  return out;
}

Member::Alarm Member::alarm(Now now) const {
  for (const Pending& p : pending_)
    if (p.d.type == Datagram::Type::Fail && now.mono - p.first_sent >= config_.alone_after)
      return Alarm::Alone;
  if (head_heard_ && !head_gone_ && now.mono - last_heard_ > config_.timeout)
    return Alarm::HeadLost;
  return Alarm::None;
}

unsigned Member::head_silent_s(Now now) const {
  return static_cast<unsigned>(
      std::chrono::duration_cast<std::chrono::seconds>(now.mono - last_heard_).count());
}

Clock::time_point Member::next_event(Now now) const {
  Clock::time_point next = next_beat_;
  for (const Pending& p : pending_) {
    next = std::min(next, p.last_sent + config_.resend);
    if (p.d.type == Datagram::Type::Fail) next = std::min(next, p.first_sent + config_.alone_after);
  }
  if (head_heard_ && !head_gone_) next = std::min(next, last_heard_ + config_.timeout + Ms(1));
  return std::max(next, now.mono);
}

}  // namespace ddp::watch
