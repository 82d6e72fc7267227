#include "stop_signals.hpp"

#include <signal.h>

#include <atomic>
#include <vector>

namespace ddp::trainer {
namespace {

constexpr int kSignals[2] = {SIGTERM, SIGUSR1};
std::atomic<int> g_received{0};
// The ranks agreed to stop (agreed_stop): this process is on its way out with the checkpoint saved.
std::atomic<bool> g_stopping{false};
struct sigaction g_previous[2];

void on_signal(int signal) { g_received.store(signal); }

}  // namespace

StopSignals::StopSignals() {
  g_received = 0;
  g_stopping = false;
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  // Restarted, so that a signal never makes a collective's read or write fail half way.
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  for (int i = 0; i < 2; ++i) sigaction(kSignals[i], &sa, &g_previous[i]);
}

StopSignals::~StopSignals() {
  // After a stop the signals stay ignored: a rank stops at the step another rank's signal decided,
  // and its own copy (srun delivers a signal node by node) may come only after that, while it
  // leaves with the checkpoint saved. Restored, SIGUSR1's default would end it there.
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  for (int i = 0; i < 2; ++i) sigaction(kSignals[i], g_stopping ? &ignore : &g_previous[i], nullptr);
}

int StopSignals::received() { return g_received.load(); }

std::string StopSignals::name(int signal) {
  return std::string("SIG") + (signal == SIGTERM ? "TERM" : signal == SIGUSR1 ? "USR1" : std::to_string(signal));
}

int agreed_stop(ProcessGroup& group) {
  const int mine = StopSignals::received();
  if (group.context().world_size == 1) {
    if (mine != 0) g_stopping = true;
    return mine;
  }
  std::vector<double> seen;
  for (int s : kSignals) seen.push_back(mine == s ? 1 : 0);
  const auto any = group.sum(seen);
  for (std::size_t i = 0; i < any.size(); ++i)
    if (any[i] > 0) {
      g_stopping = true;
      return kSignals[i];
    }
  return 0;
}

}  // namespace ddp::trainer
