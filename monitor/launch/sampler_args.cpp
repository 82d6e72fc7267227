#include "sampler_args.hpp"

#include <pwd.h>
#include <unistd.h>

#include <functional>
#include <map>
#include <vector>

#include "error.hpp"
#include "parse.hpp"

namespace ddp::monitor {
namespace {

using plan::PlanError;
using plan::quoted;

std::uint32_t u32(const std::string& what, const std::string& text) {
  return static_cast<std::uint32_t>(plan::parse_unsigned(what, text, 0, 0xffffffffu));
}

unsigned small(const std::string& what, const std::string& text, unsigned min, unsigned max) {
  return static_cast<unsigned>(plan::parse_unsigned(what, text, min, max));
}

// A name that goes into a file name or a record field: no '/', no spaces, no control bytes.
std::string plain(const std::string& what, const std::string& text) {
  for (unsigned char c : text)
    if (c <= ' ' || c == '/' || c == '=' || c >= 0x7f || text.size() > 255)
      throw PlanError(what + "=" + quoted(text) + " is not a plain name");
  if (text.empty()) throw PlanError(what + " is empty");
  return text;
}

}  // namespace

std::vector<std::string> to_argv(const SamplerArgs& a) {
  std::vector<std::string> v = {"--interval", std::to_string(a.interval),
                                "--job",      std::to_string(a.job),
                                "--step",     std::to_string(a.step),
                                "--node",     a.node,
                                "--node-index", std::to_string(a.node_index),
                                "--nodes",    std::to_string(a.nodes),
                                "--tasks",    std::to_string(a.tasks)};
  if (!a.dir.empty()) v.insert(v.end(), {"--dir", a.dir});
  for (const GpuTarget& g : a.gpus)
    v.insert(v.end(), {"--gpu", std::to_string(g.index) + (g.busid.empty() ? "" : "@" + g.busid)});
  for (const auto& n : a.nets) v.insert(v.end(), {"--net", n});
  for (const auto& i : a.ibs) v.insert(v.end(), {"--ib", i});
  for (const TaskTarget& t : a.task_pids)
    v.insert(v.end(), {"--task", std::to_string(t.rank) + ":" + std::to_string(t.pid)});
  if (a.control_fd >= 0) v.insert(v.end(), {"--control-fd", std::to_string(a.control_fd)});
  if (a.reply_fd >= 0) v.insert(v.end(), {"--reply-fd", std::to_string(a.reply_fd)});
  return v;
}

SamplerArgs parse_sampler_args(const std::vector<std::string>& argv) {
  SamplerArgs a;
  bool have_job = false, have_node = false;
  const std::map<std::string, std::function<void(const std::string&)>> flags = {
      {"--interval",
       [&](const std::string& v) { a.interval = small("--interval", v, kMinInterval, kMaxInterval); }},
      {"--dir",
       [&](const std::string& v) {
         expand_dir(v, "user", 0);  // refuses a bad pattern before anything is sampled
         a.dir = v;
       }},
      {"--job",
       [&](const std::string& v) {
         a.job = u32("--job", v);
         have_job = true;
       }},
      {"--step", [&](const std::string& v) { a.step = u32("--step", v); }},
      {"--node",
       [&](const std::string& v) {
         a.node = plain("--node", v);
         have_node = true;
       }},
      {"--node-index", [&](const std::string& v) { a.node_index = small("--node-index", v, 0, 1u << 20); }},
      {"--nodes", [&](const std::string& v) { a.nodes = small("--nodes", v, 1, 1u << 20); }},
      {"--tasks", [&](const std::string& v) { a.tasks = small("--tasks", v, 1, 1u << 16); }},
      {"--gpu",
       [&](const std::string& v) {
         const auto at = v.find('@');
         GpuTarget g;
         g.index = small("--gpu", v.substr(0, at), 0, 1u << 16);
         if (at != std::string::npos) g.busid = plain("--gpu bus id", v.substr(at + 1));
         a.gpus.push_back(g);
       }},
      {"--net", [&](const std::string& v) { a.nets.push_back(plain("--net", v)); }},
      {"--ib", [&](const std::string& v) { a.ibs.push_back(plain("--ib", v)); }},
      {"--task",
       [&](const std::string& v) {
         const auto colon = v.find(':');
         if (colon == std::string::npos)
           throw PlanError("--task=" + quoted(v) + " is not RANK:PID, e.g. 0:12345");
         TaskTarget t;
         t.rank = small("--task rank", v.substr(0, colon), 0, 0x7fffffffu);
         t.pid = static_cast<long>(small("--task pid", v.substr(colon + 1), 1, 0x7fffffffu));
         a.task_pids.push_back(t);
       }},
      {"--control-fd",
       [&](const std::string& v) { a.control_fd = static_cast<int>(small("--control-fd", v, 0, 65535)); }},
      {"--reply-fd",
       [&](const std::string& v) { a.reply_fd = static_cast<int>(small("--reply-fd", v, 0, 65535)); }},
  };
  for (std::size_t i = 0; i < argv.size(); i += 2) {
    const auto f = flags.find(argv[i]);
    if (f == flags.end())
      throw PlanError(quoted(argv[i]) + " is not an argument of ddp-monitor; see ddp-monitor --help");
    if (i + 1 >= argv.size()) throw PlanError(argv[i] + " needs a value");
    f->second(argv[i + 1]);
  }
  if (!have_job || !have_node)
    throw PlanError("ddp-monitor needs --job and --node (the plugin gives them; see ddp-monitor --help)");
  return a;
}

std::string expand_dir(const std::string& pattern, const std::string& user, std::uint32_t job) {
  if (pattern.empty() || pattern.front() != '/')
    throw PlanError("monitor directory " + quoted(pattern) +
                    " is not an absolute path; write it from '/', e.g. /scratch/%u/ddp-monitor");
  std::string out;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%') {
      out += pattern[i];
      continue;
    }
    const char next = i + 1 < pattern.size() ? pattern[i + 1] : '\0';
    if (next == 'u')
      out += user;
    else if (next == 'j')
      out += std::to_string(job);
    else if (next == '%')
      out += '%';
    else
      throw PlanError("monitor directory " + quoted(pattern) + " holds " +
                      quoted(pattern.substr(i, 2)) +
                      "; allowed: %u (the user), %j (the job id) and %% (a '%')");
    ++i;
  }
  return out;
}

std::string current_user_name() {
  std::vector<char> buf(16384);
  passwd pw{};
  passwd* found = nullptr;
  if (getpwuid_r(getuid(), &pw, buf.data(), buf.size(), &found) == 0 && found) return pw.pw_name;
  return std::to_string(getuid());
}

std::string current_dir() {
  std::vector<char> buf(4096);
  return getcwd(buf.data(), buf.size()) ? buf.data() : ".";
}

std::string log_file_name(std::uint32_t job, std::uint32_t step, const std::string& node) {
  return std::string(kFilePrefix) + std::to_string(job) + "." + std::to_string(step) + "-" + node +
         kFileSuffix;
}

}  // namespace ddp::monitor
