#include "options.hpp"

#include <algorithm>

#include "error.hpp"
#include "names.hpp"
#include "parse.hpp"
#include "sampler_args.hpp"
#include "watch_args.hpp"

namespace ddp::plan {
namespace {

// Linux hands out ephemeral ports from here (net.ipv4.ip_local_port_range default); a fixed
// rendezvous port inside it collides with some client's outgoing connection sooner or later.
constexpr unsigned kEphemeralLow = 32768;
constexpr unsigned kEphemeralHigh = 60999;

std::string opt(std::string_view name) { return "--" + std::string(name); }

contract::Backend parse_backend(std::string_view value) {
  if (const auto backend = contract::backend_from_name(value)) return *backend;
  throw PlanError(opt(kOptBackend) + "=" + quoted(value) +
                  " is not a backend; allowed: nccl (GPUs) or gloo (CPUs)");
}

Bind parse_bind(std::string_view value) {
  if (value == "closest") return Bind::Closest;
  if (value == "none") return Bind::None;
  throw PlanError(opt(kOptBind) + "=" + quoted(value) +
                  " is not a binding; allowed: closest (cores next to the rank's GPU) or none");
}

bool parse_yes_no(std::string_view what, std::string_view value) {
  if (value == "yes" || value == "true" || value == "1") return true;
  if (value == "no" || value == "false" || value == "0") return false;
  throw PlanError(std::string(what) + "=" + quoted(value) + " is not a boolean; allowed: yes or no");
}

MonitorRequest parse_monitor(std::string_view value) {
  if (value.empty()) return {};
  if (value == "off") return {false, std::nullopt};
  const std::string range = std::to_string(monitor::kMinInterval) + ".." +
                            std::to_string(monitor::kMaxInterval);
  try {
    return {true, static_cast<unsigned>(parse_unsigned(opt(kOptMonitor), value, monitor::kMinInterval,
                                                       monitor::kMaxInterval))};
  } catch (const PlanError&) {
    throw PlanError(opt(kOptMonitor) + "=" + quoted(value) +
                    " is not a sampling interval; allowed: " + range +
                    " seconds, or off (no monitoring, even where the profile turns it on)");
  }
}

WatchRequest parse_watch(std::string_view value) {
  if (value.empty()) return {};
  if (value == "off") return {false, std::nullopt, std::nullopt};
  const auto seconds = [&](std::string_view text) {
    return static_cast<unsigned>(
        parse_unsigned(opt(kOptWatch), text, watch::kMinTimeout, watch::kMaxTimeout));
  };
  try {
    const auto colon = value.find(':');
    if (colon == std::string_view::npos) return {true, seconds(value), std::nullopt};
    return {true, seconds(value.substr(0, colon)), seconds(value.substr(colon + 1))};
  } catch (const PlanError&) {
    throw PlanError(opt(kOptWatch) + "=" + quoted(value) +
                    " is not a time-out; allowed: " + std::to_string(watch::kMinTimeout) + ".." +
                    std::to_string(watch::kMaxTimeout) +
                    " seconds (how long a rank may stay frozen or a node silent), optionally "
                    ":SECONDS for a rank in state D (default: the larger of 300 and the first), "
                    "or off (no failure watch: a failed rank no longer ends the step)");
  }
}

}  // namespace

void check_profile_name(std::string_view option, std::string_view name) {
  constexpr std::size_t kMaxName = 64;
  const bool ok = plain_name(name, kMaxName) && name.front() != '.' && name.front() != '-';
  if (!ok)
    throw PlanError(std::string(option) + "=" + quoted(name) +
                    " is not a profile name; a name is 1-64 letters, digits, '-', '_' or '.', "
                    "not starting with '.' or '-' (a name, not a path)");
  if (name == kDdpOff)
    throw PlanError(std::string(option) + "=" + quoted(name) +
                    " is reserved: --ddp=off keeps a step plain; give the profile another name");
}

void apply_user_option(UserOptions& options, std::string_view name, std::string_view value) {
  options.requested = true;
  if (name == kOptDdp) {
    // --ddp alone turns the plugin on; --ddp=PROFILE also names the profile; --ddp=off keeps
    // this step plain although the job asked for DDP (srun sees sbatch's options first, then its
    // own, so the last --ddp wins).
    options.off = value == kDdpOff;
    if (!value.empty() && !options.off) {
      check_profile_name(opt(kOptDdp), value);
      options.profile = std::string(value);
    }
  } else if (name == kOptNodes) {
    options.nodes = static_cast<unsigned>(parse_unsigned(opt(name), value, 1, kMaxNodes));
  } else if (name == kOptGpus) {
    options.gpus_per_node =
        static_cast<unsigned>(parse_unsigned(opt(name), value, 1, kMaxGpusPerNode));
  } else if (name == kOptProfile) {
    // An absolute path names the user's own file: whether that is allowed is the site's call,
    // made where the plugstack configuration is known.
    if (!value.empty() && value.front() == '/') {
      constexpr std::size_t kMaxPath = 4096;
      // A path goes into messages and slurmd's log: no control characters (a newline, an
      // escape sequence), which no file a user means to name holds.
      const bool controls = std::any_of(value.begin(), value.end(), [](char c) {
        return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
      });
      if (value.size() > kMaxPath || controls || value.size() < 6 ||
          value.substr(value.size() - 5) != ".yaml")
        throw PlanError(opt(name) + "=" + quoted(value) +
                        " is not a profile file; give a profile name, or (where the site allows "
                        "user profiles) an absolute path ending in .yaml");
      options.profile_file = std::string(value);
      options.profile.reset();
    } else {
      check_profile_name(opt(name), value);
      options.profile = std::string(value);
      options.profile_file.reset();
    }
  } else if (name == kOptPort) {
    if (value == "auto")
      options.port.reset();
    else
      options.port = static_cast<std::uint16_t>(parse_unsigned(opt(name) + " (or 'auto')",
                                                               value, 1, 65535));
  } else if (name == kOptBackend) {
    options.backend = parse_backend(value);
  } else if (name == kOptBind) {
    options.bind = parse_bind(value);
  } else if (name == kOptVerbose) {
    options.verbose = true;
  } else if (name == kOptPreflight) {
    options.preflight = value.empty() || parse_yes_no(opt(name), value);
  } else if (name == kOptMonitor) {
    options.monitor = parse_monitor(value);
  } else if (name == kOptWatch) {
    options.watch = parse_watch(value);
  } else if (name == kOptRetries) {
    options.retries = static_cast<unsigned>(parse_unsigned(opt(name), value, 0, watch::kMaxRetries));
  } else {
    throw PlanError(quoted(opt(name)) + " is not an option of spank_ddp");
  }
}

PortRange parse_port_range(std::string_view what, std::string_view text) {
  const std::size_t dash = text.find('-');
  if (dash == std::string_view::npos)
    throw PlanError(std::string(what) + "=" + quoted(text) +
                    " is not a port range; write LOW-HIGH, e.g. 20000-29999");
  PortRange r;
  r.low = static_cast<std::uint16_t>(parse_unsigned(what, text.substr(0, dash), 1024, 65535));
  r.high = static_cast<std::uint16_t>(parse_unsigned(what, text.substr(dash + 1), 1024, 65535));
  if (r.high < r.low)
    throw PlanError(std::string(what) + "=" + quoted(text) + " runs backwards; write LOW-HIGH");
  if (r.high >= kEphemeralLow && r.low <= kEphemeralHigh)
    throw PlanError(std::string(what) + "=" + quoted(text) +
                    " overlaps Linux's ephemeral ports 32768-60999, where outgoing connections "
                    "take their ports; choose a range below 32768 or above 60999");
  return r;
}

namespace {
constexpr const char* kPlugstackKeys =
    "keys: profile_dir, default_profile, port_range, user_profiles, topology, activate, "
    "node_facts_dir, monitor, preflight, watch";
}  // namespace

PlugstackConfig parse_plugstack_args(const std::vector<std::string>& args) {
  PlugstackConfig config;
  for (const std::string& arg : args) {
    const std::size_t eq = arg.find('=');
    if (eq == std::string::npos || eq == 0)
      throw PlanError("plugstack.conf argument " + quoted(arg) +
                      " is not key=value; " + kPlugstackKeys);
    const std::string key = arg.substr(0, eq);
    const std::string value = arg.substr(eq + 1);
    if (key == "profile_dir") {
      if (value.empty() || value.front() != '/')
        throw PlanError("plugstack.conf profile_dir=" + quoted(value) +
                        " must be an absolute directory path");
      config.profile_dir = value;
    } else if (key == "default_profile") {
      if (value == "auto") {
        config.default_profile.reset();
      } else {
        check_profile_name("plugstack.conf default_profile", value);
        config.default_profile = value;
      }
    } else if (key == "port_range") {
      config.port_range = parse_port_range("plugstack.conf port_range", value);
    } else if (key == "user_profiles") {
      config.user_profiles = parse_yes_no("plugstack.conf user_profiles", value);
    } else if (key == "topology") {
      if (value.empty() || value.front() != '/')
        throw PlanError("plugstack.conf topology=" + quoted(value) +
                        " must be an absolute path to an hwloc XML file");
      config.topology_xml = value;
    } else if (key == "preflight") {
      if (value.empty() || value.front() != '/')
        throw PlanError("plugstack.conf preflight=" + quoted(value) +
                        " must be the absolute path of the ddp-preflight program");
      config.preflight_program = value;
    } else if (key == "node_facts_dir") {
      if (value == "off") {
        config.node_facts_dir.clear();
      } else {
        if (value.size() < 2 || value.front() != '/' || value.find_first_of(" \t\n") != std::string::npos)
          throw PlanError("plugstack.conf node_facts_dir=" + quoted(value) +
                          " must be an absolute directory path that only root may write "
                          "(default /run/slurm-ddp), or off");
        config.node_facts_dir = value;
      }
    } else if (key == "activate") {
      if (value == "always")
        config.activation = Activation::Always;
      else if (value == "on-request")
        config.activation = Activation::OnRequest;
      else
        throw PlanError("plugstack.conf activate=" + quoted(value) +
                        " is not allowed; use on-request (only steps with a --ddp* option) or "
                        "always (every step with more than zero tasks)");
    } else if (key == "monitor") {
      if (value.empty() || value.front() != '/')
        throw PlanError("plugstack.conf monitor=" + quoted(value) +
                        " must be the absolute path of the ddp-monitor program");
      config.monitor_program = value;
    } else if (key == "watch") {
      if (value.empty() || value.front() != '/')
        throw PlanError("plugstack.conf watch=" + quoted(value) +
                        " must be the absolute path of the ddp-watch program");
      config.watch_program = value;
    } else {
      throw PlanError("plugstack.conf argument " + quoted(key) +
                      " is unknown; " + kPlugstackKeys);
    }
  }
  return config;
}

PlugstackConfig parse_good_plugstack_args(const std::vector<std::string>& args) {
  std::vector<std::string> good;
  for (const std::string& arg : args) {
    try {
      (void)parse_plugstack_args({arg});
      good.push_back(arg);
    } catch (const PlanError&) {
    }
  }
  try {
    return parse_plugstack_args(good);
  } catch (const PlanError&) {
    return PlugstackConfig{};
  }
}

}  // namespace ddp::plan
