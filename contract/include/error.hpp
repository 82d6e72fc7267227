// The one error type of the planner core. A message always names the problem (option or variable,
// the value, what is allowed) and the fix; the SPANK glue turns it into a failed step, never a crash.
#pragma once

#include <stdexcept>
#include <string>

namespace ddp::plan {

class PlanError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A problem every node of a step finds alike (an option's value, the step's shape against what
// was asked): slurmstepd says it once for the step, from its first node, where 10,000 nodes would
// otherwise each say the same.
class StepWideError : public PlanError {
 public:
  using PlanError::PlanError;
};

}  // namespace ddp::plan
