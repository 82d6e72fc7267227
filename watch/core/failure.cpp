#include "failure.hpp"

#include <sys/wait.h>

#include <algorithm>
#include <csignal>
#include <ctime>
#include <tuple>

namespace ddp::watch {

Now Now::read() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return {Clock::now(), static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec};
}

bool ended_on_request(int wait_status, bool step_signalled) {
  if (step_signalled) return true;
  if (!WIFSIGNALED(wait_status)) return false;
  const int sig = WTERMSIG(wait_status);
  return sig == SIGTERM || sig == SIGINT || sig == SIGHUP;
}

namespace {

bool follower_signal(const Failure& f) {
  return f.how == How::Signal && (f.code == SIGABRT || f.code == SIGPIPE);
}

}  // namespace

std::size_t root_cause(const std::vector<const Failure*>& failures, std::int64_t simultaneous_ns) {
  constexpr std::int64_t kSecond = 1000000000;
  std::int64_t earliest = failures.front()->at_ns;
  for (const Failure* f : failures) earliest = std::min(earliest, f->at_ns);
  const auto consequence = [&](const Failure& f) {
    if (!follower_signal(f)) return false;
    for (const Failure* g : failures)
      if (g != &f && !follower_signal(*g) && g->at_ns <= f.at_ns && f.at_ns - g->at_ns < kSecond)
        return true;
    return false;
  };
  const auto key = [&](const Failure& f) {
    const bool now = f.at_ns - earliest <= simultaneous_ns;
    const bool preferred = now && f.how == How::Signal && !follower_signal(f);
    return std::make_tuple(consequence(f), !now, !preferred, f.at_ns, f.rank);
  };
  std::size_t best = 0;
  for (std::size_t i = 1; i < failures.size(); ++i)
    if (key(*failures[i]) < key(*failures[best])) best = i;
  return best;
}

std::string signal_name(int signal) {
  // sigabbrev_np() is glibc 2.32+; the signals a rank dies of are few.
  switch (signal) {
    case SIGHUP: return "SIGHUP";
    case SIGINT: return "SIGINT";
    case SIGQUIT: return "SIGQUIT";
    case SIGILL: return "SIGILL";
    case SIGTRAP: return "SIGTRAP";
    case SIGABRT: return "SIGABRT";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGKILL: return "SIGKILL";
    case SIGUSR1: return "SIGUSR1";
    case SIGSEGV: return "SIGSEGV";
    case SIGUSR2: return "SIGUSR2";
    case SIGPIPE: return "SIGPIPE";
    case SIGALRM: return "SIGALRM";
    case SIGTERM: return "SIGTERM";
    case SIGXCPU: return "SIGXCPU";
    case SIGXFSZ: return "SIGXFSZ";
    case SIGSYS: return "SIGSYS";
    default: return "signal " + std::to_string(signal);
  }
}

std::string how_short(const Failure& f) {
  switch (f.how) {
    case How::Exit: return "exit code " + std::to_string(f.code);
    case How::Signal: return signal_name(f.code);
    case How::Stopped: return "stopped";
    case How::Hung: return "hung in state D";
    case How::Silent: return "silent";
  }
  return "?";
}

std::string how_text(const Failure& f) {
  const std::string s = std::to_string(f.seconds) + " s";
  switch (f.how) {
    case How::Exit: return "exited with code " + std::to_string(f.code);
    case How::Signal:
      return "was killed by signal " + std::to_string(f.code) + " (" + signal_name(f.code) + ")";
    case How::Stopped:
      return "has been stopped (state T: SIGSTOP or SIGTSTP) for " + s;
    case How::Hung:
      return "has been in uninterruptible sleep (state D) for " + s +
             " without using CPU time or doing I/O: a hung file system or device";
    case How::Silent:
      return "has not answered the failure watch for " + s +
             ": the node froze, or dropped off the network";
  }
  return "failed";
}

}  // namespace ddp::watch
