// For tests of code that throws ddp::plan::PlanError: the message of what `f` throws, "" when it
// throws nothing.
#pragma once

#include <functional>
#include <string>

#include "error.hpp"

namespace ddp::test {

inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ddp::plan::PlanError& e) {
    return e.what();
  }
  return "";
}

}  // namespace ddp::test
