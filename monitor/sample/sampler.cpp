#include "sampler.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <vector>

#include "control.hpp"
#include "error.hpp"
#include "net_counters.hpp"
#include "nvml.hpp"
#include "proc_cpu.hpp"
#include "record.hpp"
#include "summary.hpp"
#include "trusted_dir.hpp"

namespace ddp::monitor {
namespace {

double monotonic() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double wall_clock() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

void write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<std::size_t>(n);
  }
}

// The file in `dir` (a descriptor, or AT_FDCWD), opened only when it is the user's own: in a
// directory others may add names to (a sticky one, or the job's working directory wherever the
// user chose it), someone may have made the name first as their file, a FIFO (O_NONBLOCK: never
// waited on) or a second name of one of the user's files. Truncated only once it is the user's.
int open_own_file(int dir, const std::string& name, const std::string& path) {
  const int fd =
      ::openat(dir, name.c_str(), O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
  struct stat st{};
  if (fd < 0) {
    // ELOOP (a symbolic link), ENXIO (a FIFO nobody reads): say what is there, not the errno.
    const int err = errno;
    if (fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(st.st_mode))
      throw plan::PlanError("will not write " + path + ": it is not a regular file (owner uid " +
                            std::to_string(st.st_uid) + "); remove it");
    throw plan::PlanError("cannot write " + path + ": " + std::strerror(err));
  }
  std::string problem;
  if (fstat(fd, &st) != 0)
    problem = std::string("cannot examine it: ") + std::strerror(errno);
  else if (!S_ISREG(st.st_mode))
    problem = "it is not a regular file (owner uid " + std::to_string(st.st_uid) + ")";
  else if (st.st_uid != getuid())
    problem = "it belongs to uid " + std::to_string(st.st_uid) + ", not to this job's user";
  else if (st.st_nlink != 1)
    problem = "it has other names (hard links)";
  else if (::ftruncate(fd, 0) != 0)
    problem = std::string("cannot empty it: ") + std::strerror(errno);
  if (!problem.empty()) {
    ::close(fd);
    throw plan::PlanError("will not write " + path + ": " + problem + "; remove it");
  }
  return fd;
}

class Sampler {
 public:
  Sampler(const SamplerArgs& args, const SamplerPaths& paths, int summary_fd)
      : args_(args),
        paths_(paths),
        summary_fd_(summary_fd),
        trees_(paths.proc, static_cast<long>(getpid())),
        clock_ticks_(std::max(1L, sysconf(_SC_CLK_TCK))),
        control_(args.control_fd),
        reply_(args.reply_fd) {}

  int run();

 private:
  struct Task {
    TaskInfo info;
    std::uint64_t start_time = 0;
    std::uint64_t last_ticks = 0;
    double last_time = 0;
    bool alive = true;
  };

  double now() const { return monotonic() - t0_; }
  void emit(double time, RecordBody body);
  void note(const std::string& text) { emit(now(), Note{text}); }
  void open_file();
  void open_nvml();
  void add_task(unsigned rank, unsigned local, long pid);
  void read_control();
  void sample(bool baseline = false);
  bool all_tasks_gone();
  void finish(const std::string& reason);

  const SamplerArgs& args_;
  SamplerPaths paths_;
  int summary_fd_;
  ProcessTrees trees_;
  long clock_ticks_;
  double t0_ = 0;
  std::FILE* out_ = nullptr;
  NodeSummary summary_;
  std::unique_ptr<Nvml> nvml_;
  std::vector<std::pair<unsigned, Nvml::Device>> devices_;
  std::vector<Task> tasks_;
  std::map<std::string, ByteCounts> base_;  // counters at TIME 0, "net:IF" and "ib:HCA:PORT"
  int control_;
  int reply_;  // where to say done
  LineBuffer control_in_;
  bool control_ended_ = false;
  double tasks_gone_since_ = -1;
  std::set<std::string> missing_;  // NICs already said to have no counters
};

// The summary adds each record as the file holds it (rounded as written), so ddp-report, which
// reads the file, prints the very same summary.
void Sampler::emit(double time, RecordBody body) {
  const Record r{time, std::move(body)};
  const std::string line = format_record(r);
  const auto written = parse_record(line);
  summary_.add(written ? *written : r);
  if (out_) std::fprintf(out_, "%s\n", line.c_str());
}

// monitor.dir is the site's pattern (/scratch/%u/ddp-monitor): made by the sampler itself, as
// the job's user, and used only when every directory on the way is root's or the user's and no
// one else may write it (trusted_dir.hpp), so another user who made /scratch/alice first cannot
// read, replace or redirect alice's samples. The job's working directory, the default, is the
// user's own choice, where the program writes too: only the file itself is checked there.
void Sampler::open_file() {
  const std::string name = log_file_name(args_.job, args_.step, args_.node);
  const std::string dir =
      args_.dir.empty() ? current_dir() : expand_dir(args_.dir, current_user_name(), args_.job);
  const std::string path = dir + "/" + name;
  try {
    plan::TrustedDir monitor_dir;
    if (!args_.dir.empty()) {
      monitor_dir = plan::open_trusted_dir(dir, getuid(), /*make_missing=*/true);
      if (!monitor_dir)
        throw plan::PlanError("will not write in " + dir + ": " + monitor_dir.problem());
    }
    const int fd = open_own_file(monitor_dir ? monitor_dir.fd() : AT_FDCWD, name, path);
    out_ = fdopen(fd, "w");
    if (!out_) {
      ::close(fd);
      throw plan::PlanError("cannot write " + path + ": " + std::strerror(errno));
    }
    summary_.file = path;
  } catch (const plan::PlanError& e) {
    // Said at once (a long job should not learn it at the end) and again in the summary.
    const std::string text = std::string(e.what()) + "; this node's samples are not kept";
    write_all(summary_fd_, "ddp-monitor on " + args_.node + ": warning: " + text + "\n");
    summary_.notes.push_back(text);
  }
}

void Sampler::open_nvml() {
  if (args_.gpus.empty()) return;
  try {
    nvml_ = Nvml::open();
  } catch (const plan::PlanError& e) {
    note("NVML is not available (" + std::string(e.what()) + "): GPUs are not sampled");
    return;
  }
  for (const GpuTarget& g : args_.gpus) {
    try {
      const Nvml::Device dev = nvml_->device(g);
      emit(now(), nvml_->info(dev, g));
      devices_.emplace_back(g.index, dev);
    } catch (const plan::PlanError& e) {
      note(std::string(e.what()) + ": this GPU is not sampled");
    }
  }
}

void Sampler::add_task(unsigned rank, unsigned local, long pid) {
  for (const Task& t : tasks_)
    if (t.info.pid == pid) return;
  Task t;
  t.info = {rank, local, pid};
  if (const auto s = read_proc_stat(paths_.proc, pid)) t.start_time = s->start_time;
  t.last_time = now();
  const auto ticks = trees_.ticks({pid});
  if (const auto it = ticks.find(pid); it != ticks.end()) t.last_ticks = it->second;
  tasks_.push_back(t);
  emit(t.last_time, t.info);
}

// Task registrations from slurmstepd; end of stream (or a broken one) means stop.
void Sampler::read_control() {
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(control_, buf, sizeof buf);
    if (n > 0) {
      control_in_.feed(buf, static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    control_ended_ = true;  // 0: end of stream; other errors: slurmstepd is gone
    break;
  }
  while (const auto line = control_in_.next()) {
    const auto m = parse_control(*line);
    if (m && m->kind == ControlMessage::Kind::Task)
      add_task(static_cast<unsigned>(m->global), static_cast<unsigned>(m->local), m->pid);
    if (m && m->kind == ControlMessage::Kind::End) control_ended_ = true;
  }
}

// The baseline (at TIME 0) only notes the NICs' counters: everything is counted from there.
void Sampler::sample(bool baseline) {
  const double t = now();
  if (!baseline)
    for (const auto& [index, dev] : devices_) emit(t, nvml_->sample(dev, index));

  std::vector<long> roots;
  for (const Task& task : tasks_)
    if (task.alive) roots.push_back(task.info.pid);
  const auto ticks = trees_.ticks(roots);
  for (Task& task : tasks_) {
    if (!task.alive) continue;
    const auto stat = read_proc_stat(paths_.proc, task.info.pid);
    if (!stat || stat->start_time != task.start_time || stat->state == 'Z') {
      task.alive = false;
      continue;
    }
    // Alive but not yet the user's: slurmstepd registers a task when it forks it, and until the
    // task has taken the user's credentials and exec'd its program, its /proc entry is root's.
    // Its ticks are counted from the first sample that sees it as the user's.
    const auto it = ticks.find(task.info.pid);
    if (it == ticks.end()) continue;
    const double dt = t - task.last_time;
    // A child that left the tree (orphaned) takes its ticks along: never a negative share.
    const std::uint64_t used = it->second > task.last_ticks ? it->second - task.last_ticks : 0;
    if (dt > 0 && !baseline)
      emit(t, CpuSample{task.info.rank, 100.0 * static_cast<double>(used) /
                                            static_cast<double>(clock_ticks_) / dt});
    task.last_ticks = it->second;
    task.last_time = t;
  }

  const auto since_start = [&](const std::string& key, const ByteCounts& now_counts, bool ib,
                               const std::string& nic) {
    auto it = base_.emplace(key, now_counts).first;
    // A counter that went backwards was reset (driver reload): count from there.
    if (now_counts.rx < it->second.rx || now_counts.tx < it->second.tx) it->second = {0, 0};
    if (!baseline)
      emit(t, NetSample{nic, ib, now_counts.rx - it->second.rx, now_counts.tx - it->second.tx});
  };
  // A NIC without counters is said once, then skipped.
  const auto missing = [&](const std::string& key, const std::string& text) {
    if (missing_.insert(key).second) note(text);
  };
  if (!args_.nets.empty()) {
    const auto dev = read_proc_net_dev(paths_.proc);
    for (const std::string& nic : args_.nets) {
      if (const auto it = dev.find(nic); it != dev.end())
        since_start("net:" + nic, it->second, false, nic);
      else
        missing("net:" + nic, "interface " + nic + " is not in " + paths_.proc +
                                  "/net/dev: its bytes are not counted");
    }
  }
  for (const std::string& port : args_.ibs) {
    if (const auto c = read_ib_port(paths_.sys, port))
      since_start("ib:" + port, *c, true, port);
    else
      missing("ib:" + port, "InfiniBand port " + port + " has no port_rcv_data/port_xmit_data under " +
                                paths_.sys + "/class/infiniband: its bytes are not counted");
  }
  if (out_) std::fflush(out_);
}

bool Sampler::all_tasks_gone() {
  if (tasks_.empty() || tasks_.size() < (args_.task_pids.empty() ? args_.tasks : 1)) return false;
  return std::none_of(tasks_.begin(), tasks_.end(), [](const Task& t) { return t.alive; });
}

void Sampler::finish(const std::string& reason) {
  emit(now(), EndRecord{reason});
  if (out_) {
    std::fclose(out_);
    out_ = nullptr;
  }
  // Past kFullNodes the job's output would grow with the step: the first node speaks for all.
  if (args_.nodes <= kFullNodes || args_.node_index == 0)
    write_all(summary_fd_, format_summary(summary_));
  if (args_.nodes > kFullNodes && args_.node_index == 0)
    write_all(summary_fd_, "ddp-monitor: " + std::to_string(args_.nodes) +
                               " nodes were sampled; the others' summaries are in their files: "
                               "ddp-report " + std::to_string(args_.job) + "." +
                               std::to_string(args_.step) +
                               " reports the step (its spread and its worst nodes)\n");
  nvml_.reset();
  if (reply_ >= 0) write_all(reply_, kDoneMessage);
}

int Sampler::run() {
  t0_ = monotonic();
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&stop_signals, sig);
  sigprocmask(SIG_BLOCK, &stop_signals, nullptr);
  const int signals = signalfd(-1, &stop_signals, SFD_CLOEXEC | SFD_NONBLOCK);

  open_file();
  StartRecord start;
  start.job = args_.job;
  start.step = args_.step;
  start.node = args_.node;
  start.node_index = args_.node_index;
  start.nodes = args_.nodes;
  start.interval = args_.interval;
  start.unix_time = wall_clock();
  start.pid = getpid();
  emit(0, start);
  open_nvml();
  for (const TaskTarget& t : args_.task_pids) add_task(t.rank, t.rank, t.pid);
  if (control_ >= 0) read_control();
  sample(/*baseline=*/true);

  std::string reason;
  for (unsigned tick = 1; reason.empty(); ++tick) {
    const double due = static_cast<double>(tick) * args_.interval;
    for (;;) {
      // The stream may have ended already: a step shorter than the sampler's start.
      if (control_ended_) {
        reason = "step-ended";
        break;
      }
      const double wait = due - now();
      if (wait <= 0) break;
      pollfd fds[2] = {{signals, POLLIN, 0}, {control_, POLLIN, 0}};
      const int n = ::poll(fds, control_ >= 0 && !control_ended_ ? 2 : 1,
                           static_cast<int>(std::ceil(wait * 1000)));
      if (n < 0 && errno != EINTR) break;
      if (n > 0 && fds[0].revents) {
        reason = "signal";
        break;
      }
      if (n > 0 && control_ >= 0 && fds[1].revents) read_control();
    }
    sample();
    if (reason.empty() && all_tasks_gone()) {
      // By hand that is the end; under slurmstepd its end of stream says so first, unless it
      // is wedged: then give it a grace period before stopping alone.
      if (tasks_gone_since_ < 0) tasks_gone_since_ = now();
      const double grace = control_ >= 0 ? std::max(10.0, 3.0 * args_.interval) : 0;
      if (now() - tasks_gone_since_ >= grace) reason = "tasks-ended";
    }
  }
  finish(reason);
  if (signals >= 0) ::close(signals);
  return 0;
}

}  // namespace

int run_sampler(const SamplerArgs& args, const SamplerPaths& paths, int summary_fd) {
  return Sampler(args, paths, summary_fd).run();
}

}  // namespace ddp::monitor
