#include "retry.hpp"

#include <csignal>

namespace ddp::watch {
namespace {

// "rank 5 on n3 was killed by signal 9 (SIGKILL)", "node n3 (ranks 4-7) stopped answering...".
std::string what_failed(const Failure& f) {
  if (f.how == How::Silent)
    return "node " + f.host + (f.ranks.empty() ? "" : " (ranks " + f.ranks + ")") + " " +
           how_text(f);
  return "rank " + std::to_string(f.rank) + " on " + f.host + " " + how_text(f);
}

RetryDecision counted(const RetryPlan& plan) {
  RetryDecision d;
  d.attempt = plan.restarts + 1;
  d.attempts = plan.retries + 1;
  return d;
}

std::string setting(const RetryPlan& plan) {
  return "(--ddp-retries=" + std::to_string(plan.retries) + ")";
}

RetryDecision names_no_node(const std::string& why, const RetryPlan& plan) {
  RetryDecision d = counted(plan);
  d.kind = RetryDecision::Kind::NoNode;
  d.line = "not retried " + setting(plan) + ": " + why;
  return d;
}

}  // namespace

std::string node_list(const std::vector<std::string>& nodes) {
  std::string s;
  for (const auto& n : nodes) s += (s.empty() ? "" : ",") + n;
  return s;
}

bool names_its_node(int signal) { return signal == SIGKILL || signal == SIGBUS; }

RetryDecision decide_retry(const std::vector<std::string>& nodes, const std::string& what,
                           const RetryPlan& plan) {
  if (plan.retries == 0) return {};
  if (nodes.empty())
    return names_no_node(what + ", which names no node to leave out; another attempt would "
                                "fail the same way", plan);
  RetryDecision d = counted(plan);
  d.nodes = nodes;
  if (plan.restarts >= plan.retries) {
    d.kind = RetryDecision::Kind::Exhausted;
    d.line = "not retried: attempt " + std::to_string(d.attempt) + " failed, and the job was "
             "requeued " + std::to_string(plan.restarts) + " times already " + setting(plan) +
             ": " + what;
    return d;
  }
  d.kind = RetryDecision::Kind::Retry;
  d.line = "asking Slurm to requeue the job for attempt " + std::to_string(d.attempt + 1) + " of " +
           std::to_string(d.attempts) + ", without " + node_list(nodes) + " (" + what + ")";
  return d;
}

RetryDecision decide_retry(const Verdict& verdict, const RetryPlan& plan) {
  if (plan.retries == 0) return {};
  const Failure& f = verdict.first;
  if (f.how == How::Exit)
    return names_no_node("rank " + std::to_string(f.rank) + " " + how_text(f) +
                             ", a failure of the program that names no node; another attempt "
                             "would fail the same way", plan);
  if (f.how == How::Signal && !names_its_node(f.code))
    return names_no_node("rank " + std::to_string(f.rank) + " " + how_text(f) +
                             ", a crash of the program that names no node; another attempt "
                             "would crash the same way", plan);
  // Every member silent to the head at once: the head's own network, or the network between
  // them, more likely than that many nodes; and a head cut off would name a healthy one.
  if (f.how == How::Silent && verdict.other_silent_nodes > 0)
    return names_no_node(std::to_string(verdict.other_silent_nodes + 1) +
                             " nodes stopped answering the failure watch at once: the network, "
                             "not one node", plan);
  // A node that never said its name to the head: nothing to exclude it by.
  if (f.host.empty())
    return names_no_node(how_short(f) + " on node " + std::to_string(f.node) +
                             " of the step, whose host name the failure watch never heard, so no "
                             "node can be excluded", plan);
  return decide_retry({f.host}, what_failed(f), plan);
}

}  // namespace ddp::watch
