// This machine's host name, for messages and for telling the local node from the others.
#pragma once

#include <optional>
#include <string>

namespace ddp::plan {

// gethostname(2), or nullopt when it fails or gives an empty name.
std::optional<std::string> local_host_name();

}  // namespace ddp::plan
