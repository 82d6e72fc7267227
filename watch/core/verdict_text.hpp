// The one message of a failed step, as the job's output shows it (each line after the plugin's
// "spank_ddp: " prefix): which rank failed first, on which node and how; its exception, from its
// error file; the others counted, never listed.
//
//   step 42.0 failed: rank 3 on n2 exited with code 1, the first of 4 ranks to fail; ending the step
//   root cause: ValueError: bad batch (File "/work/train.py", line 57, in step)
//   also failed after it: 2 ranks (exit code 1), 1 rank (SIGKILL)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "judge.hpp"

namespace ddp::watch {

struct StepName {
  std::uint32_t job = 0;
  std::uint32_t step = 0;
  unsigned world = 1;      // ranks in the step
  unsigned timeout_s = 0;  // the watch's time-out, named in frozen and silent verdicts
};

std::vector<std::string> verdict_lines(const Verdict& v, const StepName& step);

}  // namespace ddp::watch
