#include "watch_args.hpp"

#include <algorithm>
#include <functional>
#include <map>

#include "error.hpp"
#include "parse.hpp"

namespace ddp::watch {
namespace {

using plan::PlanError;
using plan::quoted;

unsigned number(const std::string& what, const std::string& text, std::uint64_t min, std::uint64_t max) {
  return static_cast<unsigned>(plan::parse_unsigned(what, text, min, max));
}

// A host name or a path: printable, no spaces (it is said in messages and used in file names).
std::string printable(const std::string& what, const std::string& text) {
  if (text.empty() || text.size() > 4096) throw PlanError(what + " is empty or too long");
  for (unsigned char c : text)
    if (c <= ' ' || c >= 0x7f) throw PlanError(what + "=" + quoted(text) + " holds a space or control byte");
  return text;
}

// "LOW-HIGH", as plugstack.conf's port_range.
plan::PortRange port_range(const std::string& text) {
  const auto dash = text.find('-');
  if (dash == std::string::npos) throw PlanError("--ports=" + quoted(text) + " is not LOW-HIGH");
  plan::PortRange r;
  r.low = static_cast<std::uint16_t>(number("--ports", text.substr(0, dash), 1, 65535));
  r.high = static_cast<std::uint16_t>(number("--ports", text.substr(dash + 1), r.low, 65535));
  return r;
}

}  // namespace

std::vector<std::string> to_argv(const WatchArgs& a) {
  std::vector<std::string> v = {"--job",  std::to_string(a.job),    "--step",  std::to_string(a.step),
                                "--node", std::to_string(a.node),   "--nodes", std::to_string(a.nodes),
                                "--host", a.host,                   "--world", std::to_string(a.world),
                                "--head", a.head,
                                "--ports", std::to_string(a.ports.low) + "-" + std::to_string(a.ports.high),
                                "--timeout", std::to_string(a.timeout)};
  if (a.hung_timeout != 0) v.insert(v.end(), {"--hung-timeout", std::to_string(a.hung_timeout)});
  if (a.retries != 0)
    v.insert(v.end(), {"--retries", std::to_string(a.retries), "--restarts", std::to_string(a.restarts)});
  if (a.control_fd >= 0) v.insert(v.end(), {"--control-fd", std::to_string(a.control_fd)});
  if (a.reply_fd >= 0) v.insert(v.end(), {"--reply-fd", std::to_string(a.reply_fd)});
  return v;
}

WatchArgs parse_watch_args(const std::vector<std::string>& argv) {
  WatchArgs a;
  const std::map<std::string, std::function<void(const std::string&)>> flags = {
      {"--job", [&](const std::string& v) { a.job = number("--job", v, 0, 0xffffffffu); }},
      {"--step", [&](const std::string& v) { a.step = number("--step", v, 0, 0xffffffffu); }},
      {"--node", [&](const std::string& v) { a.node = number("--node", v, 0, 1u << 20); }},
      {"--nodes", [&](const std::string& v) { a.nodes = number("--nodes", v, 1, 1u << 20); }},
      {"--host", [&](const std::string& v) { a.host = printable("--host", v); }},
      {"--world", [&](const std::string& v) { a.world = number("--world", v, 1, 1u << 26); }},
      {"--head", [&](const std::string& v) { a.head = printable("--head", v); }},
      {"--ports", [&](const std::string& v) { a.ports = port_range(v); }},
      {"--timeout",
       [&](const std::string& v) { a.timeout = number("--timeout", v, kMinTimeout, kMaxTimeout); }},
      {"--hung-timeout",
       [&](const std::string& v) { a.hung_timeout = number("--hung-timeout", v, kMinTimeout, kMaxTimeout); }},
      {"--retries", [&](const std::string& v) { a.retries = number("--retries", v, 0, kMaxRetries); }},
      {"--restarts", [&](const std::string& v) { a.restarts = number("--restarts", v, 0, 1000000); }},
      {"--control-fd",
       [&](const std::string& v) { a.control_fd = static_cast<int>(number("--control-fd", v, 0, 65535)); }},
      {"--reply-fd",
       [&](const std::string& v) { a.reply_fd = static_cast<int>(number("--reply-fd", v, 0, 65535)); }},
  };
  for (std::size_t i = 0; i < argv.size(); i += 2) {
    const auto f = flags.find(argv[i]);
    if (f == flags.end())
      throw PlanError(quoted(argv[i]) + " is not an argument of ddp-watch; see ddp-watch --help");
    if (i + 1 >= argv.size()) throw PlanError(argv[i] + " needs a value");
    f->second(argv[i + 1]);
  }
  if (a.host.empty() || a.head.empty())
    throw PlanError("ddp-watch needs --host and --head (the plugin gives them)");
  if (a.node >= a.nodes) throw PlanError("--node must be below --nodes");
  return a;
}

unsigned default_hung_timeout(unsigned timeout) { return std::max(timeout, kMinHungTimeout); }

bool valid_key(std::string_view key) {
  if (key.size() != kKeyHexDigits) return false;
  for (char c : key)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

std::string error_file_name(unsigned rank) { return "rank-" + std::to_string(rank) + ".json"; }

std::string error_file(const std::string& dir, unsigned rank) { return dir + "/" + error_file_name(rank); }

}  // namespace ddp::watch
