// Rank 0 serves the rendezvous store: a connection per node's leader, or per rank unrelayed (two on
// LibTorch before 2.1, whose store clients open a second one for watchKey callbacks). 8,192 ranks
// exceed the soft limit of open files most systems start processes with (1,024), and the store then
// fails in accept() with words that name no limit.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace ddp::detail {

// Raises the soft RLIMIT_NOFILE to the hard limit when `wanted` descriptors exceed it (the
// program's own files need room beyond any count of ours). Throws ddp::Error naming both limits
// and how to raise the hard one only when that is below `needed`, what the work cannot do
// without: a hard limit between the two is a job that runs, not one that fails for what it might
// have used, and the words for it are returned, a warning to say. `who` says what needs them
// ("rank 0 serving the rendezvous of 8192 ranks").
std::optional<std::string> ensure_open_files(std::uint64_t needed, std::uint64_t wanted, const std::string& who);

}  // namespace ddp::detail
