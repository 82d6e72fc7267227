#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>

#include "error.hpp"
#include "parse.hpp"
#include "topology_cores.hpp"
#include "topology_hwloc.hpp"

namespace ddp::plan {
namespace {

using TopologyPtr = std::unique_ptr<hwloc_topology, decltype(&hwloc_topology_destroy)>;

constexpr const char* kExportHint =
    "export one on the node with `lstopo --of xml FILE` and give that file";

// quoted() cuts at 64 characters, fit for typed values; a path is only useful whole.
std::string quoted_path(const std::string& path) {
  std::string out = "'";
  for (std::size_t i = 0; i < path.size(); i += 64) {
    const std::string piece = quoted(std::string_view(path).substr(i, 64));
    out += piece.substr(1, piece.size() - 2);
  }
  return out + "'";
}

std::string api_text(unsigned version) {
  return std::to_string(version >> 16) + "." + std::to_string((version >> 8) & 0xff);
}

// A plugin built against one hwloc ABI and run with another reads garbage from hwloc_obj; the
// major number is what hwloc changes when the ABI breaks.
void check_hwloc_abi() {
  const unsigned runtime = hwloc_get_api_version();
  if ((runtime >> 16) != (static_cast<unsigned>(HWLOC_API_VERSION) >> 16))
    throw PlanError("hwloc: built against hwloc API " + api_text(HWLOC_API_VERSION) +
                    " but the installed libhwloc has API " + api_text(runtime) +
                    "; rebuild slurm-ddp against the installed hwloc");
}

// Reading the file ourselves gives a precise reason (missing, unreadable, directory), which
// hwloc_topology_load only reports as a failure.
void check_readable(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int err = errno;
    throw PlanError("topology XML " + quoted_path(path) + " cannot be read (" +
                    (err ? std::strerror(err) : "open failed") + "); " + kExportHint);
  }
  char byte = 0;
  if (!in.get(byte))
    throw PlanError("topology XML " + quoted_path(path) + " is empty or not a regular file; " +
                    kExportHint);
}

// hwloc 2.x refuses hwloc 3.x's XML format and hwloc 3.x refuses 1.x's, saying so only on
// stderr. Returns that format ("3.x", "1.x") when the file's <topology> tag has it, else "".
std::string unimportable_format(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string head(4096, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<std::size_t>(in.gcount()));
#if HWLOC_API_VERSION >= 0x00030000
  if (head.find("<topology>") != std::string::npos) return "1.x";
#else
  if (head.find("<topology version=\"3.") != std::string::npos) return "3.x";
#endif
  return "";
}

std::string hwloc_name() {
#ifdef HWLOC_VERSION
  return std::string("hwloc ") + HWLOC_VERSION;
#else
  return "hwloc API " + api_text(hwloc_get_api_version());
#endif
}

std::string xml_load_failure(const std::string& path) {
  const std::string what = "topology XML " + quoted_path(path);
  const std::string format = unimportable_format(path);
  if (!format.empty())
    return what + " is in hwloc " + format + "'s format, which " + hwloc_name() +
           " cannot import; export it again with an lstopo of the hwloc series slurm-ddp is " +
           "built with (`lstopo --of xml FILE`) and give that file";
  return what + " is not an hwloc XML topology that " + hwloc_name() + " can import; " +
         kExportHint;
}

std::string live_load_failure(int err) {
  std::string msg = "hwloc cannot read this machine's topology (" +
                    std::string(err ? std::strerror(err) : "unknown error") + ")";
  // hwloc honours these even when the caller asks for the live machine.
  for (const char* var : {"HWLOC_XMLFILE", "HWLOC_SYNTHETIC", "HWLOC_FSROOT"})
    if (std::getenv(var) != nullptr)
      return msg + "; " + var + " is set in the environment and redirects hwloc: unset it, " +
             "or point it at a valid source";
  return msg + "; check that /sys and /proc are mounted and readable, or give an XML topology " +
         "(plugstack.conf topology=, ddp-plan --topology)";
}

// A live load runs in slurmstepd, as root, on every node of every step. hwloc's GPU-driver and
// display components would initialise the driver there (226-510 ms per load on an H100 node,
// against 13-15 ms without OpenCL) and create a GPU context the job did not ask for, which
// EXCLUSIVE_PROCESS nodes refuse to the job's own. GPUs are found from PCI (vendor, class, bus
// id) without them; excluded through hwloc's API so slurmstepd's environment stays as it is.
constexpr const char* kDriverComponents[] = {"opencl", "cuda", "nvml", "rsmi", "levelzero", "gl"};

void exclude_driver_components(hwloc_topology_t topology) {
#if HWLOC_API_VERSION >= 0x00020100
  // hwloc refuses to exclude a component it does not have (no plugin installed for it): that
  // one cannot be enabled either, so the result is not checked. tests/plugin checks what a live
  // load enables.
  for (const char* name : kDriverComponents)
    (void)hwloc_topology_set_components(topology, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, name);
#else
  (void)topology;  // hwloc < 2.1 has no per-component API; such hwloc has no Level Zero either
#endif
}

}  // namespace

Topology load_topology(const std::optional<std::string>& xml_path) {
  const auto start = std::chrono::steady_clock::now();
  check_hwloc_abi();
  if (xml_path) check_readable(*xml_path);

  hwloc_topology_t raw = nullptr;
  if (hwloc_topology_init(&raw) != 0)
    throw PlanError("hwloc: cannot initialise a topology (out of memory?); retry the step");
  TopologyPtr topology(raw, hwloc_topology_destroy);
  // The default filter drops PCI and OS devices, for XML input too: GPUs and NICs would vanish.
  hwloc_topology_set_io_types_filter(raw, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
  // hwloc parses the file here already, so a broken file fails here or in the load below.
  if (xml_path && hwloc_topology_set_xml(raw, xml_path->c_str()) != 0)
    throw PlanError(xml_load_failure(*xml_path));
  if (!xml_path) {
    exclude_driver_components(raw);
    // The whole machine, not only what this process may run on: slurmstepd sits in the step's
    // cpuset under task/cgroup with ConstrainCores=yes, and the node facts file made there serves
    // every later step. Each step narrows the CPUs by its own grant and affinity (core_grant.hpp).
#if HWLOC_API_VERSION >= 0x00020100
    hwloc_topology_set_flags(raw, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED);
#else
    hwloc_topology_set_flags(raw, HWLOC_TOPOLOGY_FLAG_WHOLE_SYSTEM);
#endif
  }
  if (hwloc_topology_load(raw) != 0) {
    const int err = errno;
    throw PlanError(xml_path ? xml_load_failure(*xml_path) : live_load_failure(err));
  }

  Topology topo;
  topo.source = xml_path ? *xml_path : "live";
  // An export made inside a cpuset knows only that cpuset's CPUs as allowed; a live load counts
  // the machine's.
  topo.cpus = hwloc_walk::cpus_of(xml_path ? hwloc_topology_get_allowed_cpuset(raw)
                                           : hwloc_topology_get_topology_cpuset(raw));
  if (topo.cpus.empty())
    throw PlanError("topology " + quoted_path(topo.source) +
                    " allows no CPUs; check the cgroup cpuset of the step (or the XML's " +
                    "allowed_cpuset)");
  topo.cores = hwloc_walk::find_cores(raw);  // Slurm's core ids -> CPUs (core_grant.hpp)
  topo.gpus = hwloc_walk::find_gpus(raw);
  topo.nics = hwloc_walk::find_nics(raw);
  topo.load_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return topo;
}

}  // namespace ddp::plan
