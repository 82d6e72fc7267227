#include "slurm_job_suspended.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "slurm_library.hpp"

extern "C" {
#include <slurm/slurm.h>
}

namespace ddp::watch {
namespace {

constexpr int kAnswerFd = 3;

// The job for slurm_load_job, whose id argument was a job id and became a step id (Slurm 26.05);
// the header this is built with decides which conversion is used.
class JobToLoad {
 public:
  explicit JobToLoad(std::uint32_t job) {
    id_.job_id = job;
    id_.step_id = NO_VAL;
    id_.step_het_comp = NO_VAL;
  }
  operator std::uint32_t() const { return id_.job_id; }
  operator slurm_step_id_t() const { return id_; }
  operator slurm_step_id_t*() { return &id_; }

 private:
  slurm_step_id_t id_{};
};

}  // namespace

std::optional<SuspendedQuestion> ask_whether_suspended(std::uint32_t job) {
  int ends[2];
  if (::pipe2(ends, O_CLOEXEC) != 0) return std::nullopt;
  const pid_t watch = ::getpid();
  const pid_t child = ::fork();  // reaped by SIGCHLD=SIG_IGN
  if (child < 0) {
    ::close(ends[0]);
    ::close(ends[1]);
    return std::nullopt;
  }
  if (child == 0) {
    // Nothing of the watch's (its UDP port, its channel to slurmstepd, the tasks' pidfds) stays
    // open in a child that slurmctld may keep waiting, and the child ends with the watch.
    if (::dup2(ends[1], kAnswerFd) < 0) ::_exit(1);
    (void)::close_range(kAnswerFd + 1, ~0U, 0);
    (void)::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != watch) ::_exit(1);
    // libslurm's own complaints (no slurm.conf, slurmctld down) are not the job's business: the
    // watch then judges as it would without asking.
    const int null = ::open("/dev/null", O_WRONLY);
    if (null >= 0) ::dup2(null, STDERR_FILENO);
    SlurmLibrary slurm;
    auto load = slurm.get<decltype(&slurm_load_job)>("slurm_load_job");
    auto free_info = slurm.get<decltype(&slurm_free_job_info_msg)>("slurm_free_job_info_msg");
    job_info_msg_t* info = nullptr;
    if (!slurm.ok() || !load || !free_info || load(&info, JobToLoad(job), SHOW_ALL) != 0 || !info) ::_exit(1);
    bool suspended = false;
    for (std::uint32_t i = 0; i < info->record_count; ++i)
      if (info->job_array[i].job_id == job && (info->job_array[i].job_state & JOB_STATE_BASE) == JOB_SUSPENDED)
        suspended = true;
    free_info(info);
    const char answer = suspended ? '1' : '0';
    (void)!::write(kAnswerFd, &answer, 1);
    ::_exit(0);
  }
  ::close(ends[1]);
  ::fcntl(ends[0], F_SETFL, ::fcntl(ends[0], F_GETFL) | O_NONBLOCK);
  return SuspendedQuestion{child, ends[0]};
}

}  // namespace ddp::watch
