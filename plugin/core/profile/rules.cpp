#include "profile_rules.hpp"

#include <algorithm>
#include <array>
#include <string_view>

#include "ddp/env_contract.hpp"
#include "error.hpp"
#include "names.hpp"
#include "parse.hpp"
#include "sampler_args.hpp"

namespace ddp::plan::profile_rules {
namespace {

bool letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool digit(char c) { return c >= '0' && c <= '9'; }

// Decided per task by the plugin from the GPU it gives the rank and the cores it pins; a
// profile value would contradict the plan (CUDA_DEVICE_ORDER must stay PCI_BUS_ID so that CUDA
// numbers GPUs as Slurm does).
constexpr std::array<std::string_view, 3> kPerTaskNames = {
    contract::kCudaVisibleDevices, contract::kCudaDeviceOrder, contract::kOmpNumThreads};

}  // namespace

std::optional<Refusal> variable_name(const std::string& name) {
  const bool syntax = !name.empty() && (letter(name[0]) || name[0] == '_') &&
                      std::all_of(name.begin(), name.end(),
                                  [](char c) { return letter(c) || digit(c) || c == '_'; });
  if (!syntax)
    return Refusal{
        "is not a variable name; names are letters, digits and '_', not starting with "
        "a digit",
        "correct the name"};
  if (starts_with(name, "LD_"))
    return Refusal{
        "is a dynamic loader variable (LD_*); a profile must not change which code "
        "every program of the job loads",
        "remove it; if a library path is needed, provide it through an environment "
        "module the user loads"};
  const auto& owned = contract::rank_variable_names();
  if (starts_with(name, "DDP_") || std::find(owned.begin(), owned.end(), name) != owned.end())
    return Refusal{
        "is written by the plugin for each task (the torchrun contract and the DDP_* "
        "report)",
        "remove it; use --ddp-port or rendezvous.port_range for the port and "
        "rendezvous.host_suffix for the address"};
  if (name == contract::kNcclSocketIfname || name == contract::kGlooSocketIfname)
    return Refusal{
        "is derived by the plugin from network.socket_interfaces and the interfaces "
        "this node really has",
        "remove it and list the interfaces in network.socket_interfaces, e.g. "
        "socket_interfaces: [ib0]"};
  if (name == contract::kNcclIbHca)
    return Refusal{"is derived by the plugin from network.hca and the HCA nearest each GPU",
                   "remove it and set network.hca: nearest, or hca: list with hca_list: "
                   "[mlx5_0:1, ...]"};
  if (std::find(kPerTaskNames.begin(), kPerTaskNames.end(), name) != kPerTaskNames.end())
    return Refusal{"is set by the plugin for each task from the GPU and cores it gives the rank",
                   "remove it; a user who needs another value sets it in the job's environment"};
  return std::nullopt;
}

std::optional<Refusal> interface_name(const std::string& name) {
  if (!plan::interface_name(name))
    return Refusal{std::string("is not a network interface name; names are ") + kInterfaceNameRule,
                   "write the name as `ip link` shows it, e.g. ib0 or ens1f0np0"};
  return std::nullopt;
}

std::optional<Refusal> hca_entry(const std::string& entry) {
  const std::size_t colon = entry.find(':');
  const std::string device = entry.substr(0, colon);
  bool ok = plain_name(device, 63);
  if (ok && colon != std::string::npos) {
    const std::string port = entry.substr(colon + 1);
    ok = !port.empty() && port.size() <= 3 && std::all_of(port.begin(), port.end(), digit) &&
         std::stoi(port) >= 1 && std::stoi(port) <= 255;
  }
  if (!ok)
    return Refusal{"is not an HCA; write DEVICE or DEVICE:PORT with a port in 1..255",
                   "write the names `ibv_devinfo` shows, e.g. mlx5_0:1"};
  return std::nullopt;
}

std::optional<Refusal> host_suffix(const std::string& suffix) {
  if (!plain_name(suffix, 64))
    return Refusal{"is not a host name suffix; a suffix is 1-64 letters, digits, '_', '.' or '-'",
                   "write what turns a node name into its fabric host name, e.g. -ib"};
  return std::nullopt;
}

std::optional<Refusal> monitor_dir(const std::string& dir) {
  if (dir.empty() || dir.front() != '/')
    return Refusal{"is not an absolute path",
                   "write the directory from '/', e.g. /scratch/%u/ddp-monitor"};
  try {
    monitor::expand_dir(dir, "user", 0);  // the sampler's own reading of the pattern
  } catch (const PlanError&) {
    return Refusal{"holds a '%' other than %u (the user), %j (the job id) or %% (a '%')",
                   "write %% for a literal '%'"};
  }
  return std::nullopt;
}

std::optional<Refusal> cluster_name(const std::string& name) {
  if (!plain_name(name, 64))
    return Refusal{"is not a Slurm cluster name; names are 1-64 letters, digits, '_', '.' or '-'",
                   "write ClusterName from slurm.conf (SLURM_CLUSTER_NAME in a job)"};
  return std::nullopt;
}

}  // namespace ddp::plan::profile_rules
