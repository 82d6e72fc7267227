#include "preflight_runner.hpp"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "helper_process.hpp"

namespace ddp::spank {
namespace {

std::string errno_text(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

std::string outcome(int status, const std::string& program) {
  if (WIFEXITED(status)) {
    switch (WEXITSTATUS(status)) {
      case 0: return "";
      case 1: return "the preflight failed (ddp-preflight's report above says why); the program was not started";
      case 2: return "ddp-preflight could not take part (its message above says why); the program was not started";
      case 127: return "cannot execute " + program + " (plugstack.conf preflight=); the program was not started";
      default:
        return "ddp-preflight ended with exit code " + std::to_string(WEXITSTATUS(status)) +
               "; the program was not started";
    }
  }
  if (WIFSIGNALED(status))
    return std::string("ddp-preflight was killed by signal ") + strsignal(WTERMSIG(status)) +
           "; the program was not started";
  return "ddp-preflight ended abnormally; the program was not started";
}

}  // namespace

std::optional<std::string> run_preflight(spank_t sp, const plan::PreflightRun& run) {
  const std::string& program = run.argv.front();
  if (access(program.c_str(), X_OK) != 0)
    return "cannot run the preflight: " + errno_text(program.c_str()) +
           ". Install ddp-preflight (slurm-ddp) on every node, or set plugstack.conf preflight=PATH";
  // The environment Slurm will give the program, the plan's variables included.
  char** env = nullptr;
  if (spank_get_item(sp, S_JOB_ENV, &env) != ESPANK_SUCCESS || env == nullptr)
    return std::string("cannot read the task's environment from Slurm for the preflight");
  const plan::UserLimits limits = task_limits(env);
  const pid_t parent = getpid();
  std::vector<std::string> args = run.argv;
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  // Slurm resets the task's signals to their defaults before task_init (mgr.c, _unblock_signals);
  // another plugin's task_init may not have: waitpid must see the child's status.
  struct sigaction dfl {}, old {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(SIGCHLD, &dfl, &old);
  const pid_t pid = fork();
  if (pid < 0) {
    sigaction(SIGCHLD, &old, nullptr);
    return "cannot start the preflight: " + errno_text("fork");
  }
  if (pid == 0) {
    // Only async-signal-safe calls until exec. The preflight dies with the task, and takes
    // scancel's SIGTERM even if a plugin before this one blocked it in the task.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    // The task may have died between fork and prctl: then no signal would ever come.
    if (getppid() != parent) _exit(126);
    apply_user_limits(limits);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    execve(argv[0], argv.data(), env);
    _exit(127);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(run.timeout_s);
  int status = 0;
  std::string result;
  for (;;) {
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) {
      result = outcome(status, program);
      break;
    }
    if (done < 0 && errno != EINTR) {
      result = "lost the preflight: " + errno_text("waitpid");
      break;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      kill(pid, SIGKILL);
      // A process stuck in the kernel (a GPU driver call) dies only when it leaves it: wait a
      // little, then leave it to the node's reaper rather than hold the task.
      const auto grace = std::chrono::steady_clock::now() + std::chrono::seconds(5);
      while (waitpid(pid, &status, WNOHANG) == 0 && std::chrono::steady_clock::now() < grace)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      result = "the preflight did not finish within " + std::to_string(run.timeout_s) +
               " s (profile preflight.timeout_s) and was ended; the program was not started";
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  sigaction(SIGCHLD, &old, nullptr);
  if (result.empty()) return std::nullopt;
  return result;
}

}  // namespace ddp::spank
