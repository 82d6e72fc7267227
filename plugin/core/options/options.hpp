// What users ask for (--ddp-* options) and what the site admin configured (plugstack.conf
// arguments), parsed and validated without any Slurm dependency.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ddp/env_contract.hpp"
#include "limits.hpp"  // kMaxNodes, kMaxGpusPerNode: the contract's, shared with cli_filter.lua
#include "port.hpp"    // PortRange

namespace ddp::plan {

enum class Bind { Closest, None };

// --ddp-monitor[=SECONDS|off]: sample the step's GPUs, CPUs and NICs (monitor/).
struct MonitorRequest {
  bool on = true;                    // off: not even when the profile enables it
  std::optional<unsigned> interval;  // seconds; unset: the profile's, else the default
};

// --ddp-watch[=SECONDS[:D_SECONDS]|off]: the failure watch (watch/): on by default for every DDP
// step.
struct WatchRequest {
  bool on = true;                   // off: no watch, not even when the profile has one
  std::optional<unsigned> timeout;  // seconds; unset: the profile's, else the default
  std::optional<unsigned> hung_timeout;  // for state D; unset: watch::default_hung_timeout()
};

// The user's options. Every field stays unset until the user gives it, so the planner can tell
// "asked for" from "default".
struct UserOptions {
  bool requested = false;  // any --ddp* option was given: the plugin acts on this step
  bool off = false;        // --ddp=off, the last word on --ddp: the step stays plain
  std::optional<unsigned> nodes;
  std::optional<unsigned> gpus_per_node;
  std::optional<std::string> profile;       // a name in the site's profile directory
  std::optional<std::string> profile_file;  // a user's own file, if the site allows them
  std::optional<std::uint16_t> port;  // unset or "auto": reserved or derived port
  std::optional<contract::Backend> backend;
  std::optional<Bind> bind;
  bool verbose = false;
  std::optional<MonitorRequest> monitor;
  std::optional<WatchRequest> watch;
  std::optional<bool> preflight;  // --ddp-preflight[=yes|no]; unset: the profile decides
  std::optional<unsigned> retries;  // --ddp-retries=N; unset: the profile's watch.retries, else 0
};

// Names of the options as users type them (without the leading "--").
inline constexpr const char* kOptDdp = "ddp";
inline constexpr const char* kOptNodes = "ddp-nodes";
inline constexpr const char* kOptGpus = "ddp-gpus";
inline constexpr const char* kOptProfile = "ddp-profile";
inline constexpr const char* kOptPort = "ddp-port";
inline constexpr const char* kOptBackend = "ddp-backend";
inline constexpr const char* kOptBind = "ddp-bind";
inline constexpr const char* kOptVerbose = "ddp-verbose";
inline constexpr const char* kOptMonitor = "ddp-monitor";
inline constexpr const char* kOptPreflight = "ddp-preflight";
inline constexpr const char* kOptWatch = "ddp-watch";
inline constexpr const char* kOptRetries = "ddp-retries";

// `--ddp=off` keeps a step plain, so "off" is never a profile name.
inline constexpr const char* kDdpOff = "off";

// Applies one option as typed on the command line (value may be empty for flags). Throws
// PlanError naming the option, the value and what is allowed. Applying the same option twice with
// the same value is harmless (Slurm calls option callbacks more than once).
void apply_user_option(UserOptions& options, std::string_view name, std::string_view value);

// A profile name as users type it: a name, never a path.
void check_profile_name(std::string_view option, std::string_view name);

enum class Activation { OnRequest, Always };

// plugstack.conf arguments: `required spank_ddp.so key=value ...`.
struct PlugstackConfig {
  std::string profile_dir = "/etc/slurm/ddp/profiles";
  std::optional<std::string> default_profile;  // unset = "auto"
  PortRange port_range;
  bool user_profiles = false;
  std::optional<std::string> topology_xml;
  Activation activation = Activation::OnRequest;
  // Where root keeps the node's topology between steps (node_facts_cache.hpp); "" = nowhere,
  // hwloc on every step. /run is cleared at boot and writable by root alone.
  std::string node_facts_dir = "/run/slurm-ddp";
  std::optional<std::string> monitor_program;  // monitor=PATH; unset: the installed ddp-monitor
  std::optional<std::string> preflight_program;  // preflight=PATH; unset: the installed ddp-preflight
  std::optional<std::string> watch_program;  // watch=PATH; unset: the installed ddp-watch
};

// Strict: an unknown key, a missing '=', or a bad value is an error that names the argument.
PlugstackConfig parse_plugstack_args(const std::vector<std::string>& args);

// For a plugstack.conf line with errors: what its good arguments say (activate=always among
// them), so that the plugin knows which steps are DDP steps and fails only those, with the error.
PlugstackConfig parse_good_plugstack_args(const std::vector<std::string>& args);

PortRange parse_port_range(std::string_view what, std::string_view text);

}  // namespace ddp::plan
