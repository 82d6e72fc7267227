// strerror as a std::string, for the data module's messages about files.
#pragma once

#include <cstring>
#include <string>

namespace ddp::cifar {

inline std::string errno_text(int err) { return std::strerror(err); }

}  // namespace ddp::cifar
