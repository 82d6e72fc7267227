// What each rank checks on its own node before any rank measures anything: the network
// interfaces and InfiniBand ports it was given are up, and it sees exactly the GPU it was given.
// Each check is a pure function of what the rank's environment says and what the node reports,
// so tests give both; collect_checks() reads the real node.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ddp/context.hpp"
#include "net_facts.hpp"

namespace ddp::preflight {

enum class Status { Ok, Failed, Skipped };

// "ok", "failed", "skipped": as the ranks' messages and --json write a status.
const char* status_name(Status status);

struct Check {
  std::string what;  // "interfaces", "hcas", "gpus"
  Status status = Status::Skipped;
  std::string detail;  // "eth0 up", "GLOO_SOCKET_IFNAME=eth1: no interface eth1", ...
};

// The interfaces NCCL and Gloo were told to use (GLOO_SOCKET_IFNAME, NCCL_SOCKET_IFNAME with its
// '=' exact and '^' exclude forms): each exists, is up and has an IPv4 address.
Check check_interfaces(const EnvLookup& env, const plan::NetFacts& net);

// "4: ACTIVE" and the like from /sys/class/infiniband/HCA/ports/PORT/state; nullopt when the HCA
// or the port does not exist.
using PortState = std::function<std::optional<std::string>(const std::string& hca, unsigned port)>;
// The ports under `root` (/sys/class/infiniband on a real node) and their states.
PortState sysfs_port_state(const std::string& root);
std::vector<unsigned> sysfs_ports(const std::string& root, const std::string& hca);

// The HCA ports chosen for this rank (DDP_NIC "mlx5_0:1 PIX", NCCL_IB_HCA's entries) are ACTIVE.
// InfiniBand devices are not namespaced like interfaces: /sys/class/infiniband shows them.
Check check_hcas(const EnvLookup& env, const std::string& sysfs_root);

// What the CUDA driver reports: PCI bus ids of the devices this process sees, in CUDA's order
// (CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER applied), or why there is no answer.
struct CudaDevices {
  bool loaded = false;
  std::string why_not;  // when not loaded: "libcuda.so.1: cannot open shared object file ..."
  std::vector<std::string> bus_ids;
};

// This rank sees exactly its GPUs: as many CUDA devices as CUDA_VISIBLE_DEVICES names,
// cuda:LOCAL_RANK exists, and it is the GPU the plugin planned (DDP_GPU_BUSID). `bus_id` gets
// cuda:LOCAL_RANK's bus id, for the check across the ranks of a node.
Check check_gpus(const EnvLookup& env, const Context& context, const CudaDevices& cuda,
                 std::string& bus_id);

// "0000:3B:00.0", "00000000:3b:00.0" -> "0000:3b:00.0": the driver, NVML and hwloc spell them apart.
std::string normal_bus_id(std::string id);

}  // namespace ddp::preflight
