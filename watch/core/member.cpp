#include "member.hpp"

#include <algorithm>

namespace ddp::watch {

Ms alone_wait(const MemberConfig& c) {
  unsigned tier = 0;
  for (unsigned n = std::max(c.node, 1u); n > 1; n >>= 1) ++tier;
  return c.alone_after + c.alone_tier * tier;
}

Member::Member(MemberConfig config, Now start)
    : config_(std::move(config)), random_(config_.seed), next_beat_(start.mono) {}

Ms Member::resend_delay() {
  const auto spread = static_cast<unsigned>(config_.resend.count() / 4) + 1;
  return config_.resend + Ms(random_() % spread);
}

void Member::set_ranks(std::string ranks) { config_.ranks = std::move(ranks); }

void Member::heard_head(Now now) {
  // From the first answer on, the beats keep this node's own phase.
  if (!head_heard_) next_beat_ = now.mono + config_.phase;
  head_heard_ = true;
  last_heard_ = now.mono;
}

void Member::heard_head_beat(std::int64_t echo_ns, std::int64_t heard_ns, std::int64_t sent_ns, Now now) {
  // Not an answer to a beat (nothing echoed), or one whose times cannot be (a clock stepped back).
  if (echo_ns <= 0 || heard_ns <= 0 || sent_ns < heard_ns || now.wall_ns < echo_ns) return;
  const std::int64_t delay = (now.wall_ns - echo_ns) - (sent_ns - heard_ns);
  if (delay < 0) return;
  // A better answer replaces the one believed, and any answer one that old: clocks drift (NTP
  // slews them by up to 0.5 ms a second), and a shortest round trip once seen may not come again.
  constexpr auto kBelieveFor = std::chrono::minutes(5);
  if (offset_delay_ns_ >= 0 && delay > offset_delay_ns_ && now.mono - offset_at_ < kBelieveFor) return;
  offset_ns_ = ((heard_ns - echo_ns) + (sent_ns - now.wall_ns)) / 2;
  offset_delay_ns_ = delay;
  offset_at_ = now.mono;
}

void Member::acked(std::uint64_t id) {
  pending_.erase(std::remove_if(pending_.begin(), pending_.end(),
                                [id](const Pending& p) { return p.d.id == id; }),
                 pending_.end());
}

void Member::discount(Ms gap) {
  last_heard_ += gap;
  for (Pending& p : pending_) p.first_sent += gap;
}

std::uint64_t Member::send_reliably(Datagram d, Now now) {
  d.node = config_.node;
  d.id = next_id_++;
  // Sent at the next due(); first_sent counts from now.
  pending_.push_back({std::move(d), now.mono, Clock::time_point{}});
  return pending_.back().d.id;
}

std::uint64_t Member::report(const Failure& first, const FailureCounts& counts, Now now) {
  if (ended_) return 0;
  Failure in_head_time = first;
  if (in_head_time.at_ns > 0) in_head_time.at_ns += offset_ns_;
  for (Pending& p : pending_)
    if (p.d.type == Datagram::Type::Fail) {
      p.d.failure = in_head_time;
      p.d.counts = counts;
      p.d.id = next_id_++;
      p.next_send = Clock::time_point{};
      return p.d.id;
    }
  Datagram d;
  d.type = Datagram::Type::Fail;
  d.failure = in_head_time;
  d.counts = counts;
  return send_reliably(std::move(d), now);
}

void Member::ended() {
  ended_ = true;
  pending_.erase(std::remove_if(pending_.begin(), pending_.end(),
                                [](const Pending& p) { return p.d.type == Datagram::Type::Fail; }),
                 pending_.end());
}

std::vector<Datagram> Member::due(Now now) {
  std::vector<Datagram> out;
  if (now.mono >= next_beat_) {
    Datagram beat;
    beat.type = Datagram::Type::Beat;
    beat.node = config_.node;
    beat.host = config_.host;
    beat.ranks = config_.ranks;
    beat.sent_ns = now.wall_ns;
    out.push_back(std::move(beat));
    // Until the head answers (it may start later than this node), beat often: the head learns
    // of every node within a second of its start.
    const Ms every = head_heard_ ? config_.interval : std::min(config_.interval, config_.resend * 2);
    next_beat_ = std::max(next_beat_ + every, now.mono);
  }
  for (Pending& p : pending_)
    if (now.mono >= p.next_send) {
      out.push_back(p.d);
      p.next_send = now.mono + resend_delay();
    }
  return out;
}

Member::Alarm Member::alarm(Now now) const {
  for (const Pending& p : pending_)
    if (!ended_ && p.d.type == Datagram::Type::Fail && now.mono - p.first_sent >= (tasks_ended_ ? config_.alone_after : alone_wait(config_)))
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
    next = std::min(next, p.next_send);
    if (p.d.type == Datagram::Type::Fail) next = std::min(next, p.first_sent + (tasks_ended_ ? config_.alone_after : alone_wait(config_)));
  }
  if (head_heard_ && !head_gone_) next = std::min(next, last_heard_ + config_.timeout + Ms(1));
  return std::max(next, now.mono);
}

}  // namespace ddp::watch
