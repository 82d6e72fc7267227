// Per-cluster profiles: what a site knows about its network and libraries, written once as YAML
// (configs/profiles/NAME.yaml) instead of in every job script. This is the Slurm-free core: read
// and validate a file, follow `extends`, choose the profile for a step, resolve it for one node.
// The planner turns a ResolvedProfile into the task's environment.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "options.hpp"

namespace ddp::plan {

// Far beyond any real profile; a larger file is a mistake or an attack on slurmstepd's memory.
inline constexpr std::size_t kMaxProfileBytes = 1 << 20;
// YAML values (scalars, lists, maps) in one file: each costs slurmstepd a few hundred bytes
// parsed, so this, not the size, bounds a file of "[a,a,a,...]". The largest shipped profile
// has about 60.
inline constexpr std::size_t kMaxProfileNodes = 4096;

enum class Transport { Ib, Ofi, Socket };    // NCCL over IB verbs, a libfabric plugin, or TCP
enum class HcaMode { Nearest, None, List };  // how NCCL_IB_HCA is chosen

const char* transport_name(Transport t);
const char* hca_mode_name(HcaMode h);

// One literal variable. `forced`: the profile's value replaces one the user set in the job's
// environment; otherwise the user's own value wins.
struct ProfileVariable {
  std::string name;
  std::string value;
  bool forced = false;
};

// What a per-node override may change. Every field stays unset until a file sets it, so that
// `extends` and overrides can tell "given here" from "inherited".
struct NodeSettings {
  std::optional<std::vector<std::string>> socket_interfaces;  // preference order
  std::optional<Transport> transport;
  std::optional<HcaMode> hca;
  std::vector<std::string> hca_list;  // "mlx5_0:1"; only with hca == List
  std::optional<Bind> bind;
  std::vector<ProfileVariable> env;  // file order, each name once
};

struct NodeOverride {
  std::string match;  // Slurm host list as written (hostlist_contains matches a node)
  std::string where;               // "file:line:column" of the entry
  NodeSettings settings;
};

// A profile's own `match`: never inherited through `extends`, so that a base profile and the
// profiles built on it never auto-match the same nodes.
struct ProfileMatch {
  std::optional<std::string> cluster;  // SLURM_CLUSTER_NAME
  std::optional<std::string> nodes;    // Slurm host list as written (hostlist_contains)
  std::string where;                   // "file:line:column" of the match section
  bool empty() const { return !cluster && !nodes; }
};

// `preflight:`: whether DDP steps run ddp-preflight before the program, and the limits the
// measurements must meet. Step-wide (one verdict for all nodes), so not per node.
struct PreflightSettings {
  std::optional<bool> enabled;
  std::optional<double> min_busbw_gbps;          // GB/s, nccl-tests' bus bandwidth
  std::optional<double> max_latency_us;          // the smallest all-reduce, microseconds
  std::optional<double> min_fraction_of_median;  // the slowest node against the median node
  std::optional<unsigned> timeout_s;             // the whole preflight, at most
  bool empty() const {
    return !enabled && !min_busbw_gbps && !max_latency_us && !min_fraction_of_median && !timeout_s;
  }
};

// `monitor:`, the site's defaults for --ddp-monitor. Not per node: one step samples alike.
struct MonitorDefaults {
  std::optional<bool> enabled;       // true: DDP steps are sampled without --ddp-monitor
  std::optional<unsigned> interval;  // seconds
  std::optional<std::string> dir;    // where the per-node files go; %u the user, %j the job id
};

// `watch:`, the site's defaults for the failure watch (--ddp-watch). Step-wide, not per node: the
// head and every member must agree on the time-out.
struct WatchDefaults {
  std::optional<bool> enabled;      // false: no watch unless the user asks with --ddp-watch
  std::optional<unsigned> timeout;  // seconds a rank may stay frozen or a node silent
  std::optional<unsigned> retries;  // --ddp-retries when the user gives none
};

// A profile with its `extends` chain already applied.
struct Profile {
  std::string name;
  std::string description;
  std::vector<std::string> files;  // its own file first, then the ones it extends
  ProfileMatch match;
  std::optional<PortRange> port_range;
  std::optional<std::string> host_suffix;  // appended to MASTER_ADDR (the IB host name)
  PreflightSettings preflight;
  NodeSettings settings;
  std::vector<NodeOverride> nodes;  // first match wins
  MonitorDefaults monitor;
  WatchDefaults watch;
};

// Reads DIR/NAME.yaml and the profiles it extends. NAME is a name, never a path.
Profile load_profile(const std::string& dir, const std::string& name);

// Reads a file named by path (an admin's `ddp-plan --check-profile FILE`, or a user's own file,
// which the caller opens with the user's rights); `extends` looks in the same directory.
Profile load_profile_file(const std::string& path);

// Names of the DIR/*.yaml profiles, sorted; a missing directory holds none.
std::vector<std::string> list_profiles(const std::string& dir);

struct ProfileChoice {
  std::optional<Profile> profile;  // unset: no profile, the plugin's built-in defaults
  std::string reason;              // "--ddp-profile=vega", "matched cluster vega and node ..."
};

// The user's --ddp-profile, else plugstack.conf's default_profile, else the most specific
// profile whose `match` fits the cluster and this node (both cluster and nodes beat one).
// `hostname` is Slurm's node name (SLURMD_NODENAME), as host lists in profiles write it.
ProfileChoice select_profile(const std::string& dir, const std::optional<std::string>& requested,
                             const std::optional<std::string>& default_profile,
                             const std::optional<std::string>& cluster_name,
                             const std::string& hostname);

// A profile as it applies to one node: the first matching per-node override applied. Unset or
// empty fields mean "the profile does not say": the plugin's defaults apply.
struct ResolvedProfile {
  std::string name;                          // empty: built-in defaults
  std::string reason;                        // from ProfileChoice, when resolved from one
  std::vector<std::string> files;            // the profile's file, then the ones it extends
  std::optional<std::string> node_override;  // "node02 in node[01-02] (FILE:LINE:COL)"
  std::optional<PortRange> port_range;
  std::optional<std::string> host_suffix;
  PreflightSettings preflight;
  std::vector<std::string> socket_interfaces;  // preference order
  std::optional<Transport> transport;
  std::optional<HcaMode> hca;
  std::vector<std::string> hca_list;
  std::optional<Bind> bind;
  std::vector<ProfileVariable> env;  // profile order, each name once
  MonitorDefaults monitor;
  WatchDefaults watch;
};

ResolvedProfile resolve_for_node(const Profile& profile, const std::string& hostname);
ResolvedProfile resolve_for_node(const ProfileChoice& choice, const std::string& hostname);

}  // namespace ddp::plan
