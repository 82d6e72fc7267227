#include "placement.hpp"

#include <algorithm>
#include <map>

namespace ddp::plan {
namespace {

CpuList intersect(const CpuList& a, const CpuList& b) {
  CpuList out;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

// Slurm index -> topology GPU. Slurm numbers a node's GPUs in gres.conf order, which for
// AutoDetect=nvml and the usual File=/dev/nvidia[0-N] is PCI bus-id order: the order of
// Topology::gpus. An index beyond what hwloc sees means the two disagree about the node, and then
// no mapping can be trusted.
std::optional<std::vector<std::size_t>> map_gpus(const Topology& topo, const PlacementRequest& req,
                                                 std::vector<std::string>& warnings) {
  std::vector<std::size_t> mapped;
  for (unsigned index : req.step_gpus) {
    if (index >= topo.gpus.size()) {
      warnings.push_back("Slurm gave GPU " + std::to_string(index) + " but hwloc finds " +
                         std::to_string(topo.gpus.size()) + " GPU(s) in the topology (" +
                         topo.source + "); GPU-local NICs and cores are not used, NCCL chooses "
                         "its NICs itself. Fix: check gres.conf against `lstopo`, or point "
                         "plugstack.conf topology= at this node's XML");
      return std::nullopt;
    }
    mapped.push_back(index);
  }
  return mapped;
}

// Per GPU, the NIC NCCL would use: among OpenFabrics devices with an active port, the nearest by
// path type, then same package; ties are spread over the GPUs that share them, as NCCL spreads them.
std::vector<std::optional<NicChoice>> choose_nics(const Topology& topo,
                                                  const std::vector<std::size_t>& gpus) {
  std::vector<std::optional<NicChoice>> out;
  std::map<std::vector<std::size_t>, unsigned> seen;  // tie set -> GPUs already given one
  for (std::size_t g : gpus) {
    const Gpu& gpu = topo.gpus[g];
    std::vector<std::size_t> best;
    PathType best_path = PathType::SYS;
    bool best_same_package = false;
    for (std::size_t n = 0; n < topo.nics.size(); ++n) {
      const Nic& nic = topo.nics[n];
      if (!nic.openfabrics() || !nic.has_active_port()) continue;
      const PathType path = path_between(gpu.locality, nic.locality);
      const bool same_package =
          gpu.locality.package >= 0 && gpu.locality.package == nic.locality.package;
      const bool better = best.empty() || path < best_path ||
                          (path == best_path && same_package && !best_same_package);
      const bool tie = !best.empty() && path == best_path && same_package == best_same_package;
      if (better) {
        best = {n};
        best_path = path;
        best_same_package = same_package;
      } else if (tie) {
        best.push_back(n);
      }
    }
    if (best.empty()) {
      out.emplace_back();
      continue;
    }
    const std::size_t pick = best[seen[best]++ % best.size()];
    unsigned port = 1;
    for (const auto& p : topo.nics[pick].ports)
      if (p.active) {
        port = p.number;
        break;
      }
    out.push_back(NicChoice{pick, port, best_path});
  }
  return out;
}

// `cpus` core by core (each core's threads together, cores in tree order), so that a rank's fair
// share is whole cores: slicing by OS number would give two ranks one thread of the same cores
// wherever the OS numbers a core's threads far apart (0 and 112 on most x86 SMT nodes).
CpuList core_order(const Topology& topo, const CpuList& cpus) {
  if (topo.cores.empty()) return cpus;
  CpuList out;
  for (const CpuList& core : topo.cores)
    for (unsigned pu : core)
      if (std::binary_search(cpus.begin(), cpus.end(), pu)) out.push_back(pu);
  // A CPU in no listed core cannot happen with a complete core list; keep it rather than drop it.
  if (out.size() != cpus.size()) return cpus;
  return out;
}

bool high_speed(NicKind kind) {
  return kind == NicKind::InfiniBand || kind == NicKind::RoCE || kind == NicKind::Slingshot;
}

void choose_socket_interface(const Topology& topo, const NetFacts& net,
                             const PlacementRequest& req, NodePlacement& out) {
  for (const auto& name : req.preferred_interfaces)
    if (net.usable(name)) {
      out.socket_interface = name;
      out.socket_interface_reason = "profile preference";
      return;
    }
  if (!req.preferred_interfaces.empty())
    out.warnings.push_back("none of the profile's socket interfaces is up with an IPv4 address "
                           "on this node; falling back to the high-speed or default-route one");
  for (const auto& nic : topo.nics) {
    if (!high_speed(nic.kind)) continue;
    for (const auto& p : nic.ports)
      if (p.active && !p.netdev.empty() && net.usable(p.netdev)) {
        out.socket_interface = p.netdev;
        out.socket_interface_reason = std::string(nic_kind_name(nic.kind)) + " interface";
        return;
      }
  }
  if (net.default_route && net.usable(*net.default_route)) {
    out.socket_interface = *net.default_route;
    out.socket_interface_reason = "default route";
    return;
  }
  std::vector<std::string> candidates;
  for (const auto& i : net.interfaces)
    if (net.usable(i.name)) candidates.push_back(i.name);
  if (candidates.size() == 1) {
    out.socket_interface = candidates.front();
    out.socket_interface_reason = "only interface with an address";
    return;
  }
  out.warnings.push_back("no socket interface could be chosen (no profile preference, no "
                         "high-speed or default-route interface up); NCCL and Gloo choose "
                         "themselves. Fix: list the interface in the cluster profile");
}

}  // namespace

CpuList fair_share(const CpuList& cpus, unsigned rank, unsigned ranks) {
  if (cpus.empty() || ranks == 0) return {};
  const std::size_t n = cpus.size();
  if (n < ranks) return {cpus[rank % n]};
  const std::size_t begin = n * rank / ranks;
  const std::size_t end = n * (rank + 1) / ranks;
  return CpuList(cpus.begin() + static_cast<std::ptrdiff_t>(begin),
                 cpus.begin() + static_cast<std::ptrdiff_t>(end));
}

NodePlacement place_ranks(const Topology& topo, const NetFacts& net, const PlacementRequest& req) {
  NodePlacement out;
  out.ranks.resize(req.local_tasks);
  const CpuList allowed = req.allowed_cpus.empty() ? topo.cpus : intersect(req.allowed_cpus, topo.cpus);

  std::optional<std::vector<std::size_t>> gpus;
  if (!req.step_gpus.empty()) gpus = map_gpus(topo, req, out.warnings);
  if (gpus) {
    const auto nics = choose_nics(topo, *gpus);
    bool any_openfabrics = false;
    for (const auto& n : topo.nics) any_openfabrics = any_openfabrics || n.openfabrics();
    for (unsigned r = 0; r < req.local_tasks && r < gpus->size(); ++r) {
      out.ranks[r].gpu = (*gpus)[r];
      out.ranks[r].nic = nics[r];
      if (!nics[r] && any_openfabrics)
        out.warnings.push_back("GPU " + topo.gpus[(*gpus)[r]].busid +
                               ": no InfiniBand/RoCE port is ACTIVE on this node; NCCL_IB_HCA is "
                               "not set and NCCL chooses (check `ibstat`)");
    }
  }

  choose_socket_interface(topo, net, req, out);
  if (req.bind == Bind::None) return out;
  // Binding must never widen what Slurm granted: without the step's CPUs, Slurm's own per-task
  // binding is the narrowest safe choice.
  if (!req.cpu_grant_problem.empty()) {
    out.warnings.push_back(req.cpu_grant_problem +
                           "; each task keeps the CPUs Slurm bound it to (no GPU-local binding)");
    return out;
  }

  // Ranks that share a GPU locality share its CPUs; CPU-only ranks share the step's CPUs.
  std::map<CpuList, std::vector<unsigned>> groups;
  for (unsigned r = 0; r < req.local_tasks; ++r) {
    const auto& rank = out.ranks[r];
    CpuList local = rank.gpu ? intersect(topo.gpus[*rank.gpu].locality.cpus, allowed) : allowed;
    if (local.empty() && rank.gpu) {
      out.warnings.push_back("the CPUs next to GPU " + topo.gpus[*rank.gpu].busid + " (" +
                             format_cpu_list(topo.gpus[*rank.gpu].locality.cpus) +
                             ") are not among the step's CPUs (" + format_cpu_list(allowed) +
                             "); local rank " + std::to_string(r) +
                             " gets a fair share of the step's CPUs instead (ask for CPUs near "
                             "the GPU, e.g. --cpus-per-gpu, or use --ddp-bind=none)");
      local = allowed;
    }
    groups[local].push_back(r);
  }
  for (const auto& [cpus, members] : groups) {
    const CpuList ordered = core_order(topo, cpus);
    for (unsigned i = 0; i < members.size(); ++i) {
      CpuList share = fair_share(ordered, i, static_cast<unsigned>(members.size()));
      std::sort(share.begin(), share.end());
      out.ranks[members[i]].cpus = std::move(share);
    }
  }
  return out;
}

}  // namespace ddp::plan
