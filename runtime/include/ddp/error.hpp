// The one error type of libddp. A message names the variable or argument, the value, what is
// allowed and the fix, so a training job that fails at start-up says why in its log.
#pragma once

#include <stdexcept>
#include <string>

namespace ddp {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace ddp
