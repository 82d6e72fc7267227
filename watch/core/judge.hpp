// The head node's side of the failure watch: it hears every node's beats and failures and
// decides, once, that the step has failed and why. Pure (no sockets, no clocks of its own), so
// unit tests and the simulator (bench/watch_sim) drive it with made-up times.
//
// The first failure wins, ordered by the nodes' wall clocks, not by arrival: a rank that raised
// on a far node is reported after the innocent ranks next to the head that lost their
// connection to it. So the verdict waits `settle` after the first report for earlier ones. A node
// that was heard and then stays silent for `timeout` is a failure of its own; a node never heard
// is not (its watch may not have started, or the network between the watches is closed): the
// watch then only says so, and never ends a step on a guess. Who was heard when, and those rules,
// are the contract's Liveness (liveness.hpp), which libddp's heartbeat judges by too.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "failure.hpp"
#include "liveness.hpp"
#include "watch_args.hpp"

namespace ddp::watch {

struct JudgeConfig {
  unsigned nodes = 1;     // nodes in the step; node 0 is the head's own
  Ms timeout{std::chrono::seconds(kDefaultTimeout)};  // a heard node silent this long has failed
  Ms settle{1000};        // after the first failure, how long to wait for earlier ones
  // Failures this close in time count as simultaneous (root_cause() says how they are ordered).
  std::int64_t simultaneous_ns = kSimultaneousNs;
};

struct Verdict {
  Failure first;           // the root cause
  // The other failures known at the verdict, by their short form ("exit code 1": 2), and the
  // other silent nodes: counted, never listed, so the text does not grow with the job.
  std::map<std::string, unsigned> also;
  unsigned other_silent_nodes = 0;
  bool unreachable = false;  // a node cannot be reached: only Slurm can end its part of the step
};

class Judge {
 public:
  Judge(JudgeConfig config, Now start);

  // Any valid datagram from a member node (its name and ranks when the datagram has them).
  void heard(unsigned node, const std::string& host, const std::string& ranks, Now now);
  // A failed or frozen rank of the head's own node (or any node, in tests).
  void failed(const Failure& f, Now now);
  // A member's report: its node's first failure and all its failed ranks so far, counted.
  // Cumulative: a report with fewer failures than one already had (a late repeat) changes nothing.
  void reported(unsigned node, const Failure& first, const FailureCounts& counts, Now now);
  // The node's ranks have all ended; its silence from now on means nothing.
  void done(unsigned node);
  // The head's watch did not run for GAP (gap.hpp): nobody's silence during it counts.
  void discount(Ms gap);
  // The head's socket dropped datagrams (a queue overflowed: a flood, or more beats than it
  // reads): they may have been anyone's beats, so no node is found silent until a whole time-out
  // has passed without drops.
  void dropped(Now now);

  // The verdict, once it is due; then never again.
  std::optional<Verdict> verdict(Now now);
  bool decided() const { return decided_; }
  // The node said its ranks all ended.
  bool is_done(unsigned node) const { return node != 0 && liveness_.has_ended(node); }
  // A failure was reported and the verdict waits for the settle time.
  bool pending() const { return first_report_ && !decided_; }
  // Every member node heard so far has said its ranks all ended, or is silent past the time-out.
  bool heard_all_done(Now now) const;
  // Nodes heard so far, for the warning about the ones never heard.
  unsigned heard_count() const;
  // When verdict() may next have something to say.
  Clock::time_point next_check(Now now) const;

 private:
  struct NodeState {
    std::int64_t last_wall_ns = 0;
    std::string host;
    std::string ranks;
  };
  std::optional<Verdict> from_failures();
  std::optional<Verdict> from_silence(Now now);

  struct Report {
    Failure first;
    FailureCounts counts;
    unsigned total = 0;
  };
  void first_reported(Now now);

  JudgeConfig config_;
  std::vector<NodeState> nodes_;
  Liveness liveness_;  // by node; the head's own (0) heard and never judged
  std::vector<Failure> failures_;       // one by one: the head's own node's
  std::map<unsigned, Report> reports_;  // by node: what the members reported
  std::optional<Clock::time_point> first_report_;
  std::optional<Clock::time_point> last_drop_;
  bool decided_ = false;
};

}  // namespace ddp::watch
