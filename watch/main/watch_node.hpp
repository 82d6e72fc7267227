// One node's failure watch, as a loop over its inputs: slurmstepd's control channel (the node's
// tasks forked and ended), the UDP socket (the other nodes' watches), /proc (frozen tasks) and
// the clock. The head node (node 0) judges (judge.hpp) and says the verdict; every other node is
// a member (member.hpp). Either way, ending the step means ending this node's tasks (SIGTERM,
// SIGKILL after a grace), telling the members to do the same, and, when a node cannot be
// reached, asking Slurm (slurm_end_step.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "control.hpp"
#include "error_file.hpp"
#include "gap.hpp"
#include "judge.hpp"
#include "local_tasks.hpp"
#include "member.hpp"
#include "slurm_job_suspended.hpp"
#include "udp.hpp"
#include "verdict_text.hpp"
#include "watch_args.hpp"

namespace ddp::watch {

struct WatchTimes {
  Ms settle{1000};       // the head's wait for earlier failures after the first
  Ms grace{3000};        // SIGTERM, then SIGKILL after this
  Ms linger{2500};       // after the node's last task, at most this long to tell the others
};

class WatchNode {
 public:
  WatchNode(const WatchArgs& args, std::string key, int out_fd, WatchTimes times = {});
  // Until the node's tasks have ended and the others were told; the exit status.
  int run();

 private:
  bool head() const { return args_.node == 0; }
  void read_control(Now now);
  void read_network(Now now);
  void task_ended(const LocalTask& t, const monitor::ControlMessage& line, Now now);
  void failed_here(Failure f, Now now);
  void on_head_datagram(const Datagram& d, const net::Address& from, Now now);
  void on_member_datagram(const Datagram& d, const net::Address& from, Now now);
  void tick(Now now);
  void discount(Ms gap);
  void settle_stopped(Now now);
  void release_stopped(Now now);
  void forget_question(bool end_it);
  bool retry_without_failed_node(const Verdict& v);
  void act(const Verdict& v, Now now);
  void act_alone(Now now);
  void end_tasks(Now now);
  void broadcast(Datagram::Type type);
  void say_bye();
  void reply(const net::Address& to, unsigned node, const Datagram& d);
  void say(const std::vector<std::string>& lines) const;
  void note_drops(Now now);
  void send_to_head(const Datagram& d);
  std::string ports_text() const;
  bool may_leave(Now now) const;
  Clock::time_point next_wake(Now now) const;
  std::string my_ranks() const;
  StepName step_name() const;

  WatchArgs args_;
  Wire wire_;  // the step's key: seals and opens the datagrams
  ErrorDir error_dir_;
  int out_fd_;
  WatchTimes times_;
  Ms timeout_;
  Ms hung_timeout_;  // state D
  Ms every_;  // between beats and between looks at /proc
  GapDetector gaps_;

  LocalTasks tasks_;
  monitor::LineBuffer control_in_;
  bool stepd_gone_ = false;
  Clock::time_point stepd_gone_at_{};

  net::Udp udp_;
  bool network_ = false;
  std::vector<std::uint16_t> ports_;  // the head's, in the order it tries them (head_ports())
  std::uint16_t head_port_ = 0;       // head: the one it listens on
  std::uint32_t dropped_seen_ = 0;    // head: the socket's drop count, last looked at
  bool drops_said_ = false;
  std::optional<Judge> judge_;
  std::vector<net::Address> members_;  // head: where each member's datagrams come from
  std::optional<Member> member_;
  std::string head_host_, head_ranks_;  // member: what the head's beats say
  std::optional<std::uint64_t> done_id_;

  std::vector<Failure> failures_here_;
  // Ranks found stopped, held while slurmctld says whether the job is suspended.
  std::vector<Failure> stopped_held_;
  std::optional<SuspendedQuestion> suspended_question_;
  Clock::time_point suspended_asked_at_{};
  bool ending_ = false;
  bool verdict_said_ = false;
  bool killed_ = false;
  Clock::time_point kill_at_{};
  Clock::time_point next_look_{};
  Clock::time_point started_{};
  bool never_heard_said_ = false;
  std::optional<Clock::time_point> end_again_at_;  // head: when the end is broadcast again
  std::vector<bool> bye_acked_;  // head, leaving: which members acknowledged its bye
  Clock::time_point budget_since_{};  // datagrams looked at this second: see read_network()
  int budget_left_ = 0;
};

}  // namespace ddp::watch
