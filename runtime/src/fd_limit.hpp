// Rank 0 serves the rendezvous store: one open connection per rank (two on LibTorch before 2.1,
// whose store clients open a second one for watchKey callbacks). 8,192 ranks exceed the soft limit
// of open files most systems start processes with (1,024), and the store then fails in accept()
// with words that name no limit.
#pragma once

#include <cstdint>
#include <string>

namespace ddp::detail {

// Raises the soft RLIMIT_NOFILE to the hard limit when `needed` descriptors exceed it. Throws
// ddp::Error naming both limits and how to raise the hard one when that is below `needed`; `who`
// says what needs them ("rank 0 serving the rendezvous of 8192 ranks").
void ensure_open_files(std::uint64_t needed, const std::string& who);

}  // namespace ddp::detail
