#include "slurm_end_step.hpp"

#include <dlfcn.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

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
  // Global: the plugins libslurm loads in turn (auth/munge...) take their symbols from it.
  void* lib = ::dlopen(DDP_SLURM_LIBRARY, RTLD_NOW | RTLD_GLOBAL);
  if (!lib) {
    say("cannot load " DDP_SLURM_LIBRARY, ::dlerror());
    ::_exit(1);
  }
  using Init = void (*)(const char*);
  using Strerror = char* (*)(int);
  auto init = reinterpret_cast<Init>(::dlsym(lib, "slurm_init"));
  auto kill = reinterpret_cast<decltype(&slurm_kill_job_step)>(::dlsym(lib, "slurm_kill_job_step"));
  auto strerror = reinterpret_cast<Strerror>(::dlsym(lib, "slurm_strerror"));
  if (!init || !kill) {
    say(DDP_SLURM_LIBRARY " lacks slurm_init or slurm_kill_job_step", nullptr);
    ::_exit(1);
  }
  init(nullptr);
  if (kill_step(kill, job, step) != 0) {
    const int e = errno;
    say("slurm_kill_job_step", strerror ? strerror(e) : "failed");
    ::_exit(1);
  }
  ::_exit(0);
}

}  // namespace ddp::watch
