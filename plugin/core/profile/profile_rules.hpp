// What a profile may hold, rule by rule, apart from the YAML walk: each function says why a value
// is refused and how to fix it, or nothing when the value is fine.
#pragma once

#include <optional>
#include <string>

namespace ddp::plan::profile_rules {

struct Refusal {
  std::string problem;  // completes "NAME ...", e.g. "is set by the plugin for each task"
  std::string fix;
};

// Variable names for `env`: shell syntax, and none that the plugin writes itself or derives from
// other profile keys, and no dynamic loader variable (LD_*).
std::optional<Refusal> variable_name(const std::string& name);

// A network interface name as `ip link` shows it (NCCL_SOCKET_IFNAME's list syntax is the
// plugin's business, so ',', '^' and '=' are refused).
std::optional<Refusal> interface_name(const std::string& name);

// An NCCL_IB_HCA entry: DEVICE or DEVICE:PORT, e.g. mlx5_0:1.
std::optional<Refusal> hca_entry(const std::string& entry);

// Appended to a node name to give its fabric host name, e.g. "-ib".
std::optional<Refusal> host_suffix(const std::string& suffix);

// monitor.dir: an absolute directory, with %u (the user), %j (the job id) and %% only.
std::optional<Refusal> monitor_dir(const std::string& dir);

// A Slurm ClusterName.
std::optional<Refusal> cluster_name(const std::string& name);

}  // namespace ddp::plan::profile_rules
