#include "slurm_end_step.hpp"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "slurm_library.hpp"

extern "C" {
#include <slurm/slurm.h>
}

namespace ddp::watch {
namespace {

// slurm_kill_job_step gained a flags argument in 23.11 and took a step id in 25.11; the header
// this was built with decides which of these is called.
[[maybe_unused]] int kill_step(int (*f)(std::uint32_t, std::uint32_t, std::uint16_t),
                               std::uint32_t job, std::uint32_t step) {
  return f(job, step, SIGKILL);
}
[[maybe_unused]] int kill_step(int (*f)(std::uint32_t, std::uint32_t, std::uint16_t, std::uint16_t),
                               std::uint32_t job, std::uint32_t step) {
  return f(job, step, SIGKILL, 0);
}
[[maybe_unused]] int kill_step(int (*f)(slurm_step_id_t*, std::uint16_t, std::uint16_t),
                               std::uint32_t job, std::uint32_t step) {
  slurm_step_id_t id{};
  id.job_id = job;
  id.step_id = step;
  id.step_het_comp = NO_VAL;
  return f(&id, SIGKILL, 0);
}

void say(const char* what, const char* detail) {
  std::fprintf(stderr, "spank_ddp: warning: the failure watch could not ask Slurm to end the step "
                       "(%s%s%s); srun waits for the lost node until Slurm marks it down\n",
               what, detail ? ": " : "", detail ? detail : "");
}

}  // namespace

void end_step_through_slurm(std::uint32_t job, std::uint32_t step) {
  const pid_t child = ::fork();
  if (child != 0) return;  // reaped by SIGCHLD=SIG_IGN; a failed fork leaves Slurm's own ways
  SlurmLibrary slurm;
  auto kill = slurm.get<decltype(&slurm_kill_job_step)>("slurm_kill_job_step");
  if (!slurm.ok() || !kill) {
    say(slurm.error().c_str(), nullptr);
    ::_exit(1);
  }
  if (kill_step(kill, job, step) != 0) {
    const int e = errno;
    say("slurm_kill_job_step", slurm.strerror(e).c_str());
    ::_exit(1);
  }
  ::_exit(0);
}

}  // namespace ddp::watch
