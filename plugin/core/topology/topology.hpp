// A node's GPUs, NICs and CPUs as the planner needs them, read with hwloc from the live machine
// or from an XML export. Plain data: the placement rules work on this model, so unit tests can
// drive them with the real topologies in tests/data/topologies without any hardware.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace ddp::plan {

// CPU numbers are the OS's (what sched_setaffinity and Cpus_allowed_list use), sorted ascending.
using CpuList = std::vector<unsigned>;

// The CPUs this process may run on (sched_getaffinity): in slurmstepd, the node or the step's
// cgroup cpuset; empty when it cannot be read.
CpuList process_affinity();

// "0-3,8,10-11", sorted, as the kernel writes Cpus_allowed_list; parse_index_list (parse.hpp)
// reads it back.
std::string format_cpu_list(const CpuList& cpus);

// Where a PCI device sits, reduced to what NCCL's path rule needs (tests/data/topologies/SOURCES.md,
// "Path rule"): the chain of PCI switches above it (hwloc objects' global persistent indices,
// nearest first), the NUMA node set and package of its CPU-side ancestor, and that ancestor's CPUs.
struct Locality {
  std::vector<unsigned long long> switches;
  std::string numa;        // hwloc nodeset of the non-I/O ancestor, as a string (equality only)
  int package = -1;        // OS index of the enclosing package, -1 when unknown
  CpuList cpus;            // CPUs of the non-I/O ancestor (its cpuset)
};

struct Gpu {
  std::string busid;       // "0000:4e:00.0", lower-case hex
  std::string name;        // hwloc OS device name when there is one (cuda0, nvml0, rsmi0, card1)
  unsigned vendor_id = 0;
  unsigned device_id = 0;
  Locality locality;
};

enum class NicKind { InfiniBand, RoCE, Slingshot, Ethernet, Efa, Other };
const char* nic_kind_name(NicKind kind);

struct NicPort {
  unsigned number = 1;       // HCA port number (1-based, as NCCL_IB_HCA wants it)
  bool active = false;       // Port<N>State == 4 (ACTIVE); true for devices without port states
  std::string netdev;        // its network interface, "" if none
  // This port's link layer. A VPI HCA can mix them (mlx4_0 with ib0 on port 1 and eth2 on port
  // 2): Nic::kind is its first active port's; RoCE ports need NCCL_IB_GID_INDEX, IB ports do not.
  NicKind link = NicKind::Other;
};

// One network device: an OpenFabrics HCA (mlx5_0, with ports) or, for NICs without one
// (Slingshot hsn/hsi, plain Ethernet), the network interface itself.
struct Nic {
  std::string name;          // mlx5_0, hfi1_0, rdmap197s0, or hsn0 / eth0 for netdev-only NICs
  NicKind kind = NicKind::Other;
  std::string busid;
  std::vector<NicPort> ports;
  Locality locality;
  bool openfabrics() const { return kind == NicKind::InfiniBand || kind == NicKind::RoCE || kind == NicKind::Efa; }
  bool has_active_port() const;
};

struct Topology {
  std::string source;        // "live" or the XML path
  std::vector<Gpu> gpus;     // compute GPUs only (no BMC VGA, no NVSwitch), in PCI bus-id order
  std::vector<Nic> nics;     // in PCI bus-id order
  // Live: every online CPU of the machine, whatever cpuset the loading process is in. From XML:
  // the CPUs the export allows (hwloc_topology_get_allowed_cpuset).
  CpuList cpus;
  // Each core's hardware threads (OS CPU numbers), cores in hwloc's tree order: socket by socket,
  // the order in which Slurm numbers a node's cores. Empty when hwloc does not show every core
  // (a cpuset hid some, or an XML was exported inside one): Slurm's core ids then cannot be mapped.
  std::vector<CpuList> cores;
  double load_ms = 0;        // how long loading took
};

// Loads with hwloc (I/O devices kept, "important" filter). Throws PlanError naming the file and
// the fix when it cannot be loaded. xml_path unset = this machine.
Topology load_topology(const std::optional<std::string>& xml_path);

// NCCL's path types between two PCI devices, near to far.
enum class PathType { PIX, PXB, PHB, SYS };
const char* path_type_name(PathType type);
PathType path_between(const Locality& a, const Locality& b);

}  // namespace ddp::plan
