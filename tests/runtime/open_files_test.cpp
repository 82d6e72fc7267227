// Rank 0's open-file demand: what the rendezvous cannot do without, which alone may fail a job,
// against what it raises its soft limit toward.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "ddp/error.hpp"
#include "fd_limit.hpp"
#include "rendezvous.hpp"
#include "torch_compat.hpp"

namespace {

using ddp::detail::ensure_open_files;
using ddp::detail::rank0_open_files;

ddp::Context job(int nodes, int ranks_per_node) {
  ddp::Context c;
  c.nodes = nodes;
  c.local_world_size = ranks_per_node;
  c.world_size = nodes * ranks_per_node;
  return c;
}

TEST(Rank0OpenFiles, RelayedItNeedsTheLeadersNotEveryRank) {
  const std::uint64_t per_client = ddp::compat::kStoreConnectionsPerClient;
  const auto demand = rank0_open_files(job(10000, 8));
  // Two clients per node's leader, rank 0's 16 readers (both ends), 64 of the program's own.
  EXPECT_EQ(demand.needed, 10000 * 2 * per_client + 2 * 16 * per_client + 64);
  EXPECT_EQ(demand.wanted, 80000 * per_client + 2 * 16 * per_client + 64);
}

TEST(Rank0OpenFiles, UnrelayedEveryRankIsNeeded) {
  auto c = job(1000, 8);
  c.store_relay = false;
  const auto demand = rank0_open_files(c);
  EXPECT_EQ(demand.needed, demand.wanted);
  EXPECT_GE(demand.needed, 8000u);
  // A node of one rank has nobody to relay for.
  const auto single = rank0_open_files(job(8000, 1));
  EXPECT_EQ(single.needed, single.wanted);
}

TEST(Rank0OpenFiles, ASmallJobCountsNoReaders) {
  // Up to 256 ranks rank 0 reads every text on its own connection.
  const std::uint64_t per_client = ddp::compat::kStoreConnectionsPerClient;
  EXPECT_EQ(rank0_open_files(job(2, 4)).needed, 2 * 2 * per_client + 64);
}

// Each case in a process of its own: it lowers the hard limit, which nothing raises again (an
// unprivileged process may lower it, never raise it).
void limit_to(rlim_t soft, rlim_t hard) {
  const rlimit l{soft, hard};
  if (setrlimit(RLIMIT_NOFILE, &l) != 0) std::exit(3);
}
rlim_t soft_limit() {
  rlimit l{};
  getrlimit(RLIMIT_NOFILE, &l);
  return l.rlim_cur;
}

TEST(EnsureOpenFiles, AHardLimitBetweenNeededAndWantedRunsWithAllItAllowsAndSaysSo) {
  EXPECT_EXIT(
      {
        limit_to(100, 200);
        const auto warning = ensure_open_files(150, 1000, "rank 0");
        if (warning) std::fprintf(stderr, "%s\n", warning->c_str());
        std::exit(soft_limit() == 200 && warning ? 0 : 1);
      },
      testing::ExitedWithCode(0), "rank 0 may need up to 1000 open files .* hard limit of open files is 200");
}

TEST(EnsureOpenFiles, TheSoftLimitGoesToTheHardOneWithRoomForTheProgramsOwn) {
  EXPECT_EXIT(
      {
        limit_to(100, 200);
        const auto warning = ensure_open_files(110, 150, "rank 0");
        std::exit(soft_limit() == 200 && !warning ? 0 : 1);
      },
      testing::ExitedWithCode(0), "");
}

TEST(EnsureOpenFiles, AHardLimitBelowNeededNamesBothAndTheFix) {
  EXPECT_EXIT(
      {
        limit_to(100, 200);
        try {
          ensure_open_files(300, 1000, "rank 0 serving the rendezvous of 600 ranks");
        } catch (const ddp::Error& e) {
          std::fprintf(stderr, "%s\n", e.what());
          std::exit(soft_limit() == 100 ? 0 : 1);
        }
        std::exit(2);
      },
      testing::ExitedWithCode(0),
      "rank 0 serving the rendezvous of 600 ranks needs at least 300 open files, but the hard limit "
      "of open files is 200 \\(ulimit -Hn\\): raise it .*LimitNOFILE=");
}

}  // namespace
