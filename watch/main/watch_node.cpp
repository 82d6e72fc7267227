#include "watch_node.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <random>
#include <thread>

#include "end_signals.hpp"
#include "error_file.hpp"
#include "parse.hpp"
#include "slurm_end_step.hpp"
#include "slurm_job_suspended.hpp"
#include "retry.hpp"
#include "slurm_requeue.hpp"
#include "verdict_text.hpp"

namespace ddp::watch {
namespace {

constexpr const char* kPrefix = "spank_ddp: ";

// The loop wakes at least this often, so that a gap (gap.hpp) shows.
constexpr Ms kLongestSleep{1000};
// slurmctld's answer to "is the job suspended?" (slurm_job_suspended.hpp), looked for this often;
// without one this soon, stopped ranks are judged as before.
constexpr Ms kSuspendedLook{100};
constexpr Ms kSuspendedWithin{10000};

Ms clamp_ms(Ms v, Ms lo, Ms hi) { return std::min(std::max(v, lo), hi); }

int timeout_ms(Clock::time_point wake, Clock::time_point now) {
  if (wake == Clock::time_point::max()) return static_cast<int>(kLongestSleep.count());
  const auto ms = std::chrono::duration_cast<Ms>(wake - now).count() + 1;
  return static_cast<int>(std::clamp<long long>(ms, 0, kLongestSleep.count()));
}

}  // namespace

WatchNode::WatchNode(const WatchArgs& args, std::string key, int out_fd, WatchTimes times)
    : args_(args),
      wire_(key, args.node, args.nodes),
      error_dir_(args.error_dir),
      out_fd_(out_fd),
      times_(times),
      timeout_(Ms(std::int64_t{args.timeout} * 1000)),
      hung_timeout_(Ms(std::int64_t{args.hung_timeout ? args.hung_timeout
                                                      : default_hung_timeout(args.timeout)} * 1000)),
      every_(clamp_ms(timeout_ / 10, Ms(500), Ms(5000))),
      gaps_(kLongestSleep) {
  const Now now = Now::read();
  started_ = now.mono;
  next_look_ = now.mono + every_;
  if (head()) {
    JudgeConfig c;
    c.nodes = args_.nodes;
    c.timeout = timeout_;
    c.settle = times_.settle;
    judge_.emplace(c, now);
    members_.resize(args_.nodes);
  } else {
    MemberConfig c;
    c.node = args_.node;
    c.host = args_.host;
    c.timeout = timeout_;
    c.interval = every_;
    // Each node its own phase, so that a large step's beats spread over the interval.
    std::minstd_rand random(static_cast<unsigned>(args_.node * 2654435761u) ^ static_cast<unsigned>(::getpid()));
    c.phase = Ms(random() % static_cast<unsigned>(every_.count()));
    c.seed = static_cast<unsigned>(random());
    member_.emplace(c, now);
  }
  // Without the step's key (an srun without the plugin made the step) there is no network: each
  // node then ends the step through Slurm by itself.
  ports_ = head_ports(key, args_.ports);
  if (!wire_.keyed() || args_.nodes == 1 || ports_.empty()) return;
  if (head()) {
    // The first of the step's ports that nobody holds: another program may hold one by chance.
    std::optional<std::string> why;
    for (const auto port : ports_)
      if (!(why = udp_.listen(port))) break;
    head_port_ = static_cast<std::uint16_t>(udp_.local_port());
    if (why)
      say({"warning: the failure watch cannot listen on any of UDP ports " + ports_text() + " of " +
           args_.host + " (" + *why + "): frozen and lost nodes are not found in this step"});
    else
      network_ = true;
  } else {
    network_ = !udp_.aim_any(args_.head, ports_);
  }
}

// A member's datagram to the head: to each of its ports, each copy sealed for its port, until the
// head answers from one; then there alone.
void WatchNode::send_to_head(const Datagram& d) {
  if (udp_.settled()) {
    udp_.send_to_head(wire_.seal(d, 0, static_cast<std::uint16_t>(udp_.head().port())));
    return;
  }
  for (const net::Address& at : udp_.candidates()) udp_.send(at, wire_.seal(d, 0, static_cast<std::uint16_t>(at.port())));
}

std::string WatchNode::ports_text() const {
  std::string s;
  for (const auto p : ports_) s += (s.empty() ? "" : ", ") + std::to_string(p);
  return s;
}



void WatchNode::say(const std::vector<std::string>& lines) const {
  std::string text;
  for (const auto& l : lines) text += kPrefix + l + "\n";
  (void)!::write(out_fd_, text.data(), text.size());
}

StepName WatchNode::step_name() const {
  return {args_.job, args_.step, args_.world, args_.timeout,
          static_cast<unsigned>(hung_timeout_.count() / 1000)};
}

std::string WatchNode::my_ranks() const { return plan::format_index_list(tasks_.ranks()); }

void WatchNode::read_control(Now now) {
  if (stepd_gone_ || args_.control_fd < 0) return;
  // The node's tasks have all ended (slurmstepd's `end`, or the end of the stream).
  const auto stepd_ended = [&] {
    stepd_gone_ = true;
    stepd_gone_at_ = now.mono;
    if (member_) member_->tasks_ended();
    if (!head() && network_ && !done_id_) {
      Datagram d;
      d.type = Datagram::Type::Done;
      done_id_ = member_->send_reliably(d, now);
    }
  };
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(args_.control_fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (n <= 0) return stepd_ended();
    (void)control_in_.feed(buf, static_cast<std::size_t>(n));
    while (const auto text = control_in_.next()) {
      const auto line = monitor::parse_control(*text);
      if (!line) continue;
      if (line->kind == monitor::ControlMessage::Kind::Task) {
        tasks_.forked(*line);
        if (member_) member_->set_ranks(my_ranks());
      } else if (line->kind == monitor::ControlMessage::Kind::Exit) {
        if (const LocalTask* t = tasks_.ended(*line)) task_ended(*t, *line, now);
      } else if (line->kind == monitor::ControlMessage::Kind::End) {
        return stepd_ended();
      }
    }
  }
}

void WatchNode::task_ended(const LocalTask& t, const monitor::ControlMessage& line, Now now) {
  // The watch's own SIGTERM and SIGKILL are the verdict's doing, not new failures.
  if (ending_) return;
  const int status = line.status;
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return;  // a rank may finish before others
  // Slurm's SIGTERM (scancel, a time limit) or a terminal's: Slurm is ending the step.
  if (ended_on_request(status, end_requested())) return;
  Failure f;
  f.rank = t.global;
  if (WIFSIGNALED(status)) {
    f.how = How::Signal;
    f.code = WTERMSIG(status);
  } else {
    f.how = How::Exit;
    f.code = WIFEXITED(status) ? WEXITSTATUS(status) : status;
  }
  // When it died, if the watch saw it (slurmstepd's line comes after the reaping and its hooks).
  f.at_ns = t.gone_ns > 0 ? std::min(t.gone_ns, line.wall_ns) : line.wall_ns;
  if (!args_.error_dir.empty())
    if (const auto record = error_dir_.read(t.global)) {
      f.error = record->error;
      f.where = record->where;
      // When it raised, which is before it ended (and before the others lost it).
      if (record->at_ns > 0) f.at_ns = std::min(f.at_ns, record->at_ns);
    }
  failed_here(std::move(f), now);
}

void WatchNode::failed_here(Failure f, Now now) {
  f.node = args_.node;  // a failure of this node's: where it happened is stamped once, here
  f.host = args_.host;
  failures_here_.push_back(f);
  if (judge_) {
    judge_->failed(f, now);
    return;
  }
  if (!network_ || member_->head_gone()) return act_alone(now);
  // One message for the node, however many of its ranks fail: its first, and the rest counted.
  std::vector<const Failure*> all;
  FailureCounts counts;
  for (const Failure& x : failures_here_) {
    all.push_back(&x);
    ++counts[how_short(x)];
  }
  (void)member_->report(*all[root_cause(all, kSimultaneousNs)], counts, now);
}

void WatchNode::read_network(Now now) {
  net::Address from;
  char buf[kMaxDatagram + 1];
  // A flood costs little: each datagram is read into this buffer and its MAC checked before
  // anything is allocated or parsed, and at most kPerRound are read before slurmstepd's channel
  // gets its turn. Everything else is read: whatever the watch leaves, the kernel drops, the
  // members' datagrams among them, and a cap of 20,000 a second let one process sending 220,000
  // junk datagrams a second get a healthy node called silent (tests/watch: flood). kPerSecond
  // only bounds a flood beyond what one core reads.
  constexpr int kPerRound = 512;
  constexpr int kPerSecond = 1000000;
  if (now.mono - budget_since_ >= Ms(1000)) {
    budget_since_ = now.mono;
    budget_left_ = kPerSecond;
  }
  for (int i = 0; i < kPerRound && budget_left_ > 0; ++i, --budget_left_) {
    const auto size = udp_.receive(buf, sizeof buf, from);
    if (!size) break;
    if (*size > kMaxDatagram) continue;
    // When this one was read: the beats' clock estimates (Member::heard_head_beat) want it, not
    // the round's start.
    const Now at = Now::read();
    // The head's datagrams name the port it listens on; a member's the port it sent to.
    const auto d = wire_.open(std::string_view(buf, *size),
                              head() ? head_port_ : static_cast<std::uint16_t>(from.port()));
    if (!d) continue;
    if (head())
      on_head_datagram(*d, from, at);
    else
      on_member_datagram(*d, from, at);
  }
  if (head()) note_drops(now);
}

// Datagrams the kernel dropped because the socket's queue was full (SO_RXQ_OVFL) may have been
// the members' beats: while it drops, nobody's silence is believed (judge.hpp), and the watch says
// so once. A node that really died is then left to Slurm's own node monitoring.
void WatchNode::note_drops(Now now) {
  const std::uint32_t dropped = udp_.dropped();
  if (dropped == dropped_seen_) return;
  dropped_seen_ = dropped;
  judge_->dropped(now);
  if (drops_said_) return;
  drops_said_ = true;
  say({"warning: the failure watch on " + args_.host + " could not read every datagram sent to it (" +
       std::to_string(dropped) +
       " dropped: more than it reads, a flood?); while it drops, no node is called lost for its "
       "silence, and Slurm's own node monitoring ends the step if one dies"});
}

void WatchNode::reply(const net::Address& to, unsigned node, const Datagram& d) {
  udp_.send(to, wire_.seal(d, node, head_port_));
}

void WatchNode::on_head_datagram(const Datagram& d, const net::Address& from, Now now) {
  if (d.node == 0 || d.node >= args_.nodes) return;
  members_[d.node] = from;
  judge_->heard(d.node, d.host, d.ranks, now);
  Datagram answer;
  switch (d.type) {
    case Datagram::Type::Beat:
      answer.type = Datagram::Type::Beat;
      answer.host = args_.host;
      answer.ranks = my_ranks();
      answer.echo_ns = d.sent_ns;
      answer.heard_ns = now.wall_ns;
      answer.sent_ns = Now::read().wall_ns;
      break;
    case Datagram::Type::Fail:
      judge_->reported(d.node, d.failure, d.counts, now);
      answer.type = Datagram::Type::Ack;
      answer.id = d.id;
      break;
    case Datagram::Type::Done:
      judge_->done(d.node);
      answer.type = Datagram::Type::Ack;
      answer.id = d.id;
      break;
    case Datagram::Type::Ack:  // of the head's bye
      if (d.node < bye_acked_.size()) bye_acked_[d.node] = true;
      return;
    default:
      return;
  }
  reply(from, d.node, answer);
  // A member that missed the end hears it with every answer.
  if (judge_->decided()) {
    Datagram end;
    end.type = Datagram::Type::End;
    reply(from, d.node, end);
  }
}

void WatchNode::on_member_datagram(const Datagram& d, const net::Address& from, Now now) {
  // Until the head first answers, a member sends to each of its ports (Udp::aim_any): from now on
  // only to the one it answered from, and it hears nobody else.
  udp_.settle(from);
  member_->heard_head(now);
  switch (d.type) {
    case Datagram::Type::Beat:
      if (!d.host.empty()) head_host_ = d.host;
      if (!d.ranks.empty()) head_ranks_ = d.ranks;
      member_->heard_head_beat(d.echo_ns, d.heard_ns, d.sent_ns, now);
      break;
    case Datagram::Type::Ack:
      member_->acked(d.id);
      break;
    case Datagram::Type::End:
      member_->ended();
      end_tasks(now);
      break;
    case Datagram::Type::Bye: {
      member_->head_bye();
      Datagram ack;
      ack.type = Datagram::Type::Ack;
      ack.node = args_.node;
      send_to_head(ack);
    }
      break;
    default:
      break;
  }
}

// Until every member still running has acknowledged it, or kByeRounds times: a member that
// missed it would take the head's silence for its loss.
void WatchNode::say_bye() {
  constexpr int kByeRounds = 6;
  constexpr int kByeWaitMs = 100;
  bye_acked_.assign(members_.size(), false);
  for (int round = 0; round < kByeRounds; ++round) {
    Datagram bye;
    bye.type = Datagram::Type::Bye;
    bool all = true;
    for (unsigned node = 1; node < members_.size(); ++node)
      if (members_[node].len != 0 && !bye_acked_[node] && !judge_->is_done(node)) {
        reply(members_[node], node, bye);
        all = false;
      }
    if (all) return;
    pollfd p{udp_.fd(), POLLIN, 0};
    const auto until = Clock::now() + Ms(kByeWaitMs);
    for (auto now = Clock::now(); now < until; now = Clock::now()) {
      const auto left = std::chrono::duration_cast<Ms>(until - now).count();
      if (::poll(&p, 1, static_cast<int>(left) + 1) > 0) read_network(Now::read());
    }
  }
}

void WatchNode::broadcast(Datagram::Type type) {
  Datagram d;
  d.type = type;
  for (unsigned node = 1; node < members_.size(); ++node)
    if (members_[node].len != 0) reply(members_[node], node, d);
}

void WatchNode::end_tasks(Now now) {
  if (ending_) return;
  ending_ = true;
  tasks_.signal_running(SIGTERM);
  kill_at_ = now.mono + times_.grace;
}

// --ddp-retries: before this node's ranks end, so that the job is requeued while srun still runs
// (the batch script would otherwise go on to its next line, or end the job). Whether it said
// anything (and then let srun hear it).
bool WatchNode::retry_without_failed_node(const Verdict& v) {
  const RetryDecision d = decide_retry(v, {args_.retries, args_.restarts});
  if (d.kind == RetryDecision::Kind::Off) return false;
  // Said first: a requeue ends srun within KillWait, and what the watch says after may be lost.
  say({d.line});
  if (d.kind != RetryDecision::Kind::NoNode) say(requeue_through_slurm(args_.job, d));
  let_srun_hear();
  return true;
}

void WatchNode::act(const Verdict& v, Now now) {
  say(verdict_lines(v, step_name()));
  verdict_said_ = true;
  // The members first, so that none waits for an answer while slurmctld is asked and then speaks
  // alone; this node's own ranks after, so that srun (and the job script) waits for the requeue.
  if (network_) {
    broadcast(Datagram::Type::End);
    // Once more a little later, for the ones that lost it, rather than twice at once (a thousand
    // members answer each beat with an end anyway).
    std::minstd_rand random(static_cast<unsigned>(now.wall_ns));
    end_again_at_ = now.mono + Ms(100 + random() % 200);
  }
  // srun stops reading the step's output once its last task is reported killed (step_launch.c:
  // client_io_handler_abort), and the verdict, written a moment before, races that report: a
  // second for it to arrive, while the members end already.
  if (!retry_without_failed_node(v)) let_srun_hear();
  end_tasks(Now::read());  // the requeue may have taken a while
  // A node that cannot be reached, or whose watch never spoke, is ended by Slurm.
  if (args_.nodes > 1 && (v.unreachable || !network_ || judge_->heard_count() < args_.nodes))
    end_step_through_slurm(args_.job, args_.step);
}

// No head to tell (none reachable, or it has left): this node says what it saw and has Slurm end
// the step. Rare by design; several nodes may then each say theirs.
void WatchNode::act_alone(Now now) {
  if (verdict_said_ || failures_here_.empty()) return;
  JudgeConfig c;
  c.timeout = timeout_;
  c.settle = Ms(0);
  Judge local(c, now);
  for (Failure f : failures_here_) {
    f.node = 0;
    local.failed(f, now);
  }
  if (auto v = local.verdict(now)) {
    v->first.node = args_.node;
    say(verdict_lines(*v, step_name()));
    // A failure early in the step, before this node has heard the head, lands here too.
    if (!retry_without_failed_node(*v)) let_srun_hear();
  }
  verdict_said_ = true;
  end_tasks(now);
  end_step_through_slurm(args_.job, args_.step);
}

void WatchNode::tick(Now now) {
  if (now.mono >= next_look_) {
    next_look_ = now.mono + every_;
    if (!ending_ && !end_requested())
      for (const FrozenTask& ft : tasks_.frozen(now.mono, timeout_, hung_timeout_)) {
        Failure f;
        f.how = ft.how;
        f.rank = ft.global;
        f.seconds = ft.seconds;
        f.at_ns = now.wall_ns;
        if (f.how == How::Stopped && args_.job != 0)
          stopped_held_.push_back(std::move(f));
        else
          failed_here(std::move(f), now);
      }
  }
  settle_stopped(now);
  // Once Slurm ends the step, its KillWait says when SIGKILL comes, not the watch's grace.
  if (ending_ && !killed_ && now.mono >= kill_at_ && !end_requested()) {
    killed_ = true;
    tasks_.signal_running(SIGKILL);
  }
  if (judge_) {
    if (const auto v = judge_->verdict(now)) act(*v, now);
    if (end_again_at_ && now.mono >= *end_again_at_) {
      end_again_at_.reset();
      broadcast(Datagram::Type::End);
    }
    if (network_ && !never_heard_said_ && now.mono - started_ > timeout_ &&
        judge_->heard_count() < args_.nodes && !stepd_gone_) {
      never_heard_said_ = true;
      say({"warning: " + std::to_string(args_.nodes - judge_->heard_count()) + " of " +
           std::to_string(args_.nodes) + " nodes never reached the failure watch on UDP port " +
           std::to_string(udp_.local_port()) + " of " + args_.host +
           " (is UDP between the nodes filtered?); their failures still end the step through "
           "Slurm, but if they freeze, Slurm alone notices"});
    }
    return;
  }
  if (!network_) return;
  for (Datagram& d : member_->due(now)) {
    d.node = args_.node;
    send_to_head(d);
  }
  switch (member_->alarm(now)) {
    case Member::Alarm::None:
      break;
    case Member::Alarm::Alone:
      act_alone(now);
      break;
    case Member::Alarm::HeadLost:
      if (ending_) break;
      // Node 1 speaks for the lost head; every member ends its own tasks, since the ranks cannot
      // go on without rank 0.
      if (args_.node == 1 && !verdict_said_) {
        Verdict v;
        v.first.how = How::Silent;
        v.first.node = 0;
        v.first.host = head_host_.empty() ? args_.head : head_host_;
        v.first.ranks = head_ranks_;
        v.first.seconds = member_->head_silent_s(now);
        v.unreachable = true;
        say(verdict_lines(v, step_name()));
        verdict_said_ = true;
        // A node cut off the network finds the head silent, as the head finds it: the head, if
        // it lives, requeues first (its beats are as late as ours), and this node then finds the
        // job requeued and excludes nothing on its own view.
        if (args_.retries > 0) {
          end_tasks(now);
          std::this_thread::sleep_for(2 * every_ + std::chrono::seconds(2));
          retry_without_failed_node(v);
        }
        end_step_through_slurm(args_.job, args_.step);
      }
      end_tasks(now);
      break;
  }
}

bool WatchNode::may_leave(Now now) const {
  if (!stepd_gone_) return false;
  if (now.mono - stepd_gone_at_ >= times_.linger) return true;
  // The head stays for a failure still settling, and after a verdict until the members it heard
  // have ended too (each answer to them repeats the end).
  if (judge_) return judge_->decided() ? judge_->heard_all_done(now) : !judge_->pending();
  return !network_ || member_->all_acked() || member_->head_gone() || !member_->head_heard();
}

Clock::time_point WatchNode::next_wake(Now now) const {
  Clock::time_point wake = next_look_;
  if (suspended_question_) wake = std::min(wake, now.mono + kSuspendedLook);
  if (ending_ && !killed_ && !end_requested()) wake = std::min(wake, kill_at_);
  if (judge_) wake = std::min(wake, judge_->next_check(now));
  if (end_again_at_) wake = std::min(wake, *end_again_at_);
  if (network_ && budget_left_ <= 0) wake = std::min(wake, budget_since_ + Ms(1000));
  if (member_ && network_) wake = std::min(wake, member_->next_event(now));
  if (stepd_gone_) wake = std::min(wake, stepd_gone_at_ + times_.linger);
  return wake;
}

// Ranks found stopped wait for slurmctld's word on the job: Slurm stops a suspended job's ranks
// (scontrol suspend, gang scheduling), and they are not frozen while it holds the job suspended.
// Their clocks start again, and a rank still stopped a time-out later is asked about again. An
// answer that does not come, or says nothing, judges them as before, those still stopped then: a
// resume may have come while slurmctld answered.
void WatchNode::settle_stopped(Now now) {
  if (stopped_held_.empty()) return;
  if (ending_ || end_requested()) {
    // The step ends anyway, its stopped ranks with it (SIGKILL), and its verdict is out.
    if (suspended_question_) forget_question(true);
    stopped_held_.clear();
    return;
  }
  if (!suspended_question_) {
    suspended_question_ = ask_whether_suspended(args_.job);
    suspended_asked_at_ = now.mono;
    if (!suspended_question_) return release_stopped(now);
  }
  char answer = 0;
  const ssize_t n = ::read(suspended_question_->fd, &answer, 1);
  const bool waiting = n < 0 && (errno == EAGAIN || errno == EINTR);
  if (waiting && now.mono - suspended_asked_at_ < kSuspendedWithin) return;
  forget_question(waiting);
  if (n == 1 && answer == '1') {
    for (const Failure& f : stopped_held_) tasks_.judge_again(f.rank);
    stopped_held_.clear();
    return;
  }
  release_stopped(now);
}

void WatchNode::forget_question(bool end_it) {
  if (end_it) ::kill(suspended_question_->pid, SIGKILL);  // its pipe is open: it has not ended
  ::close(suspended_question_->fd);
  suspended_question_.reset();
}

void WatchNode::release_stopped(Now now) {
  std::vector<Failure> held;
  held.swap(stopped_held_);
  for (Failure& f : held) {
    if (tasks_.stopped(f.rank))
      failed_here(std::move(f), now);
    else
      tasks_.judge_again(f.rank);
  }
}

// Stopped or frozen with the job: the time away is nobody's silence (gap.hpp).
void WatchNode::discount(Ms gap) {
  if (gap <= Ms(0)) return;
  started_ += gap;
  suspended_asked_at_ += gap;
  tasks_.discount(gap);
  if (judge_) judge_->discount(gap);
  if (member_) member_->discount(gap);
}

int WatchNode::run() {
  for (;;) {
    Now now = Now::read();
    discount(gaps_.update(now.mono));
    read_control(now);
    if (network_) read_network(now);
    tick(now);
    if (may_leave(now)) break;
    std::vector<pollfd> fds;
    if (!stepd_gone_ && args_.control_fd >= 0) fds.push_back({args_.control_fd, POLLIN, 0});
    if (network_ && budget_left_ > 0) fds.push_back({udp_.fd(), POLLIN, 0});
    const std::size_t first_task = fds.size();
    std::vector<int> pidfds;
    tasks_.pidfds(pidfds);
    for (int fd : pidfds) fds.push_back({fd, POLLIN, 0});
    if (::poll(fds.data(), fds.size(), timeout_ms(next_wake(now), now.mono)) > 0) {
      const std::int64_t when = Now::read().wall_ns;
      for (std::size_t i = first_task; i < fds.size(); ++i)
        if (fds[i].revents != 0) tasks_.died(fds[i].fd, when);
    }
  }
  // Leaving normally: the members stop watching a head whose ranks are done.
  if (judge_ && network_ && !judge_->decided()) say_bye();
  // The node's error files were read when their ranks failed; the node's directory goes now.
  if (!args_.error_dir.empty()) error_dir_.remove(tasks_.ranks());
  if (args_.reply_fd >= 0)
    (void)!::write(args_.reply_fd, monitor::kDoneMessage, std::strlen(monitor::kDoneMessage));
  return 0;
}

}  // namespace ddp::watch
