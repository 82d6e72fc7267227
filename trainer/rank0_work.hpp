// One rank does a long piece of work (ddp-cifar100: downloading the data set) while the others
// wait as long as it makes progress, instead of a barrier whose time-out a slow download passes.
// They meet on the rendezvous first, before any backend exists, so nothing else can time out.
#pragma once

#include <chrono>
#include <cstdio>
#include <functional>
#include <string>

#include "ddp/rendezvous.hpp"

namespace ddp::trainer {

// Rank 0 goes silent for this long (no progress, no end): the others stop waiting.
inline constexpr std::chrono::minutes kWorkSilence{5};

// A line of progress from the work, passed on to the waiting ranks.
using Tell = std::function<void(const std::string&)>;

// Rank 0 runs work(tell); each tell() reaches the other ranks, which wait for each at most
// `silence`, and rank 1 says once on `log` that (and for what) they wait. When the work fails,
// rank 0 rethrows its error and the others throw a ddp::Error that quotes it; when rank 0 goes
// silent, they throw one that says so. Every rank calls it, in the same place.
void rank0_works_others_wait(Rendezvous& rendezvous, const std::string& what,
                             const std::function<void(const Tell&)>& work,
                             std::chrono::milliseconds silence = kWorkSilence,
                             std::FILE* log = stderr);

}  // namespace ddp::trainer
