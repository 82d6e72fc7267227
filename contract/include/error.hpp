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

}  // namespace ddp::plan
