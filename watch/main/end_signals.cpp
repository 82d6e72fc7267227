#include "end_signals.hpp"

#include <signal.h>

#include <csignal>
#include <initializer_list>

namespace ddp::watch {
namespace {

volatile std::sig_atomic_t g_requested = 0;

extern "C" void on_end_signal(int) { g_requested = 1; }

}  // namespace

void catch_end_signals() {
  struct sigaction sa {};
  sa.sa_handler = on_end_signal;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGQUIT}) (void)::sigaction(sig, &sa, nullptr);
}

bool end_requested() { return g_requested != 0; }

}  // namespace ddp::watch
