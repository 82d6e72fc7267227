// For tests of code that throws ddp::plan::PlanError: the message of what `f` throws, "" when it
// throws nothing.
#pragma once

#include <functional>
#include <string>

#include "error.hpp"
#include "error_of.hpp"

namespace ddp::test {

inline std::string error_of(const std::function<void()>& f) {
  return error_of<ddp::plan::PlanError>(f);
}

}  // namespace ddp::test
