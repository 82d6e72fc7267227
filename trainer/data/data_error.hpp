#pragma once
// The one exception type of the CIFAR data module. Every message names the file (or URL), what is
// wrong with it, and what to do about it, so the trainer can print e.what() and exit.
#include <stdexcept>
#include <string>

namespace ddp::cifar {

class DataError : public std::runtime_error {
 public:
  explicit DataError(const std::string& what) : std::runtime_error(what) {}
};

}  // namespace ddp::cifar
