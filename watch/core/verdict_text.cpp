#include "verdict_text.hpp"

namespace ddp::watch {
namespace {

std::string plural(unsigned n, const char* word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

std::string who(const Failure& f) {
  if (f.how == How::Silent)
    return "node " + (f.host.empty() ? std::to_string(f.node) : f.host) +
           (f.ranks.empty() ? "" : " (ranks " + f.ranks + ")");
  return "rank " + std::to_string(f.rank) + " on " +
         (f.host.empty() ? "node " + std::to_string(f.node) : f.host);
}

}  // namespace

std::vector<std::string> verdict_lines(const Verdict& v, const StepName& step) {
  const Failure& f = v.first;
  std::vector<std::string> lines;
  std::string head = "step " + std::to_string(step.job) + "." + std::to_string(step.step) +
                     " failed: " + who(f) + " " + how_text(f);
  if (f.how == How::Exit || f.how == How::Signal)
    head += ", the first of " + plural(step.world, "rank") + " to fail";
  head += "; ending the step";
  if (f.how != How::Exit && f.how != How::Signal)
    head += " (failure watch time-out " + std::to_string(step.timeout_s) +
            " s: --ddp-watch, profile watch.timeout)";
  lines.push_back(head);
  if (!f.error.empty())
    lines.push_back("root cause: " + f.error + (f.where.empty() ? "" : " (" + f.where + ")"));
  else if (f.how == How::Exit)
    lines.push_back("rank " + std::to_string(f.rank) +
                    " left no error file: a Python program's exception is named here when its "
                    "entry point is decorated with torch's @record "
                    "(torch.distributed.elastic.multiprocessing.errors.record)");
  std::string also;
  for (const auto& [how, n] : v.also)
    also += (also.empty() ? "" : ", ") + plural(n, "rank") + " (" + how + ")";
  if (!also.empty()) lines.push_back("also failed after it: " + also);
  if (v.other_silent_nodes > 0)
    lines.push_back(plural(v.other_silent_nodes, "other node") +
                    " stopped answering the failure watch too");
  return lines;
}

}  // namespace ddp::watch
