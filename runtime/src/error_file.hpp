// A rank's error, written where torch's @record writes a Python program's exception: the file
// TORCHELASTIC_ERROR_FILE names (spank_ddp gives each rank one; torchrun does too), in torch's
// format, so the failure watch (or torchrun's agent) names a C++ program's first failure by its
// own words. The first error of the process is kept, as the one closest to the cause.
#pragma once

#include <string>

#include "ddp/context.hpp"

namespace ddp::detail {

// Once per process; nothing when the variable is unset or the file cannot be written.
void record_error(const std::string& message, const EnvLookup& env);

// torch's format (torch/distributed/elastic/multiprocessing/errors/error_handler.py).
std::string error_file_text(const std::string& message, long long unix_seconds);

}  // namespace ddp::detail
