// For tests of code that throws: the message of the E that `f` throws, "" when it throws none.
#pragma once

#include <functional>
#include <string>

namespace ddp::test {

template <class E>
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return "";
}

}  // namespace ddp::test
