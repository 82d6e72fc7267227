#include "job_lookup.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <regex>
#include <sstream>

#include "error.hpp"
#include "monitor_files.hpp"
#include "options.hpp"
#include "profile.hpp"
#include "sampler_args.hpp"

namespace ddp::monitor {
namespace {

using plan::PlanError;

struct Output {
  bool ran = false;
  int status = -1;
  std::string out, err;
};

// argv[0] from PATH, stdin from /dev/null, stdout and stderr captured (at most 1 MiB each).
Output run(const std::vector<std::string>& argv) {
  int out_pipe[2], err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) return {};
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    close(out_pipe[0]);
    close(out_pipe[1]);
    return {};
  }
  const pid_t pid = fork();
  if (pid == 0) {
    const int null = open("/dev/null", O_RDONLY);
    if (null >= 0) dup2(null, 0);
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);
  Output o;
  const auto drain = [](int fd, std::string& into) {
    char buf[4096];
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0)
      if (into.size() < (1u << 20)) into.append(buf, static_cast<std::size_t>(n));
    close(fd);
  };
  if (pid < 0) {
    close(out_pipe[0]);
    close(err_pipe[0]);
    return o;
  }
  // scontrol and sacct write little to stderr: stdout first cannot fill the other pipe.
  drain(out_pipe[0], o.out);
  drain(err_pipe[0], o.err);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  o.ran = WIFEXITED(status) && WEXITSTATUS(status) != 127;
  o.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return o;
}

// What a command said, in one line that names the command once.
std::string said(const std::string& command, const Output& o) {
  if (!o.ran) return command + ": not found";
  std::string line = (o.err.empty() ? o.out : o.err).substr(0, (o.err.empty() ? o.out : o.err).find('\n'));
  if (line.size() > 200) line = line.substr(0, 200) + "...";
  if (line.empty()) line = "no output";
  return line.rfind(command + ":", 0) == 0 ? line : command + ": " + line;
}

}  // namespace

std::optional<JobRef> parse_job_ref(const std::string& text) {
  static const std::regex shape("([0-9]{1,10})(\\.([0-9]{1,10}))?");
  std::smatch m;
  if (!std::regex_match(text, m, shape)) return std::nullopt;
  const auto u32 = [](const std::string& s) -> std::optional<std::uint32_t> {
    const unsigned long long v = std::stoull(s);
    if (v > 0xffffffffull) return std::nullopt;
    return static_cast<std::uint32_t>(v);
  };
  JobRef ref;
  const auto job = u32(m[1].str());
  if (!job) return std::nullopt;
  ref.job = *job;
  if (m[3].matched) {
    ref.step = u32(m[3].str());
    if (!ref.step) return std::nullopt;
  }
  return ref;
}

std::optional<JobFacts> parse_scontrol_job(const std::string& text) {
  // A value ends where the next " Key=" begins; a working directory may hold spaces.
  const auto value_of = [&](const std::string& key) -> std::optional<std::string> {
    static const std::regex next_key(" [A-Za-z][A-Za-z0-9_:/]*=");
    std::size_t at = text.rfind(" " + key + "=", std::string::npos);
    if (text.compare(0, key.size() + 1, key + "=") == 0) at = 0;
    else if (at == std::string::npos) return std::nullopt;
    else ++at;
    const std::size_t begin = at + key.size() + 1;
    const std::string rest = text.substr(begin, text.find('\n', begin) - begin);
    std::smatch m;
    return std::regex_search(rest, m, next_key) ? rest.substr(0, static_cast<std::size_t>(m.position(0)))
                                                : rest;
  };
  const auto work_dir = value_of("WorkDir");
  const auto user = value_of("UserId");
  if (!work_dir || !user) return std::nullopt;
  return JobFacts{*work_dir, user->substr(0, user->find('('))};
}

std::optional<JobFacts> ask_slurm(std::uint32_t job, std::string& why_not) {
  const std::string id = std::to_string(job);
  const Output sc = run({"scontrol", "show", "job", "--oneliner", id});
  if (sc.ran && sc.status == 0)
    if (auto facts = parse_scontrol_job(sc.out)) return facts;
  why_not = said("scontrol", sc);
  const Output sa = run({"sacct", "--allocations", "--noheader", "--parsable2", "--jobs", id,
                         "--format", "WorkDir,User"});
  if (sa.ran && sa.status == 0) {
    const std::string line = sa.out.substr(0, sa.out.find('\n'));
    const auto bar = line.rfind('|');
    if (bar != std::string::npos && bar > 0) return JobFacts{line.substr(0, bar), line.substr(bar + 1)};
  }
  why_not += "; " + said("sacct", sa);
  return std::nullopt;
}

std::string site_profile_dir(const std::string& snippet) {
  std::ifstream in(snippet);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string control, path, arg;
    if (!(words >> control >> path) || control.empty() || control[0] == '#') continue;
    if (path.find("spank_ddp") == std::string::npos) continue;
    std::vector<std::string> args;
    while (words >> arg) args.push_back(arg);
    try {
      return plan::parse_plugstack_args(args).profile_dir;
    } catch (const PlanError&) {
      break;  // the plugin says what is wrong with it; the default is the best guess here
    }
  }
  return plan::PlugstackConfig{}.profile_dir;
}

std::vector<MonitorFile> find_job_files(const JobRef& ref, const std::string& profile_dir,
                                        const SlurmQuery& slurm) {
  std::string why_not;
  const auto facts = slurm(ref.job, why_not);
  const std::string user = facts ? facts->user : current_user_name();
  std::vector<std::string> dirs;
  if (facts && !facts->work_dir.empty()) dirs.push_back(facts->work_dir);
  for (const std::string& name : plan::list_profiles(profile_dir)) {
    try {
      const plan::Profile p = plan::load_profile(profile_dir, name);
      if (p.monitor.dir) dirs.push_back(expand_dir(*p.monitor.dir, user, ref.job));
    } catch (const PlanError&) {
      // A broken profile is the plugin's to report; its monitor.dir cannot hold files either.
    }
  }
  if (!facts) dirs.push_back(current_dir());
  std::vector<MonitorFile> files;
  std::vector<std::string> seen;
  for (const std::string& d : dirs) {
    if (std::find(seen.begin(), seen.end(), d) != seen.end()) continue;
    seen.push_back(d);
    for (MonitorFile& f : job_files_in(d, ref.job, ref.step)) files.push_back(std::move(f));
  }
  if (!files.empty()) return files;
  std::string id = std::to_string(ref.job) + (ref.step ? "." + std::to_string(*ref.step) : "");
  std::string looked;
  for (const std::string& d : seen) looked += (looked.empty() ? "" : ", ") + d;
  std::string where = "looked in " + looked;
  if (!facts) where += " (Slurm gave no working directory for it: " + why_not + ")";
  throw PlanError("found no " + std::string(kFilePrefix) + id + (ref.step ? "-" : ".") + "*" +
                  kFileSuffix + " file of job " + id + ": " + where +
                  ". Fix: check that the step ran with --ddp-monitor, or name the files or their "
                  "directory: ddp-report DIR");
}

}  // namespace ddp::monitor
