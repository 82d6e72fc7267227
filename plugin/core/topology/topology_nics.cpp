#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>

#include "parse.hpp"
#include "topology_hwloc.hpp"

namespace ddp::plan {

const char* nic_kind_name(NicKind kind) {
  switch (kind) {
    case NicKind::InfiniBand: return "infiniband";
    case NicKind::RoCE: return "roce";
    case NicKind::Slingshot: return "slingshot";
    case NicKind::Ethernet: return "ethernet";
    case NicKind::Efa: return "efa";
    case NicKind::Other: return "other";
  }
  return "other";
}

bool Nic::has_active_port() const {
  return std::any_of(ports.begin(), ports.end(), [](const NicPort& p) { return p.active; });
}

namespace hwloc_walk {
namespace {

constexpr unsigned kAmazon = 0x1d0f;
constexpr unsigned kCray = 0x17db;  // Cassini, the Slingshot 200/400 NIC
constexpr unsigned kClassEthernet = 0x0200;
constexpr unsigned kClassInfiniBand = 0x0207;
constexpr const char* kPortActive = "4";  // IB_PORT_ACTIVE

// HCA port numbers are small and 1-based; anything else is not a port number.
std::optional<unsigned> port_number(const std::string& digits) {
  if (digits.empty() || digits.size() > 3 ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  const auto n = static_cast<unsigned>(std::strtoul(digits.c_str(), nullptr, 10));
  return n > 0 ? std::optional<unsigned>(n) : std::nullopt;
}

// "Port<N><suffix>" -> N; nullopt for any other info name.
std::optional<unsigned> port_info_number(const std::string& name, const std::string& suffix) {
  if (!starts_with(name, "Port") || name.size() <= 4 + suffix.size() ||
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
    return std::nullopt;
  return port_number(name.substr(4, name.size() - 4 - suffix.size()));
}

// Bytes in a link-layer address: IPoIB interfaces have 20 (QPN + GID), Ethernet ones 6.
std::size_t address_bytes(hwloc_obj_t netdev) {
  const std::string address = info(netdev, "Address");
  if (address.empty()) return 0;
  return static_cast<std::size_t>(std::count(address.begin(), address.end(), ':')) + 1;
}

struct PortDraft {
  std::optional<std::string> state;
  std::string link_layer;
  hwloc_obj_t netdev = nullptr;
};

// The netdev's name says nothing: sites rename IPoIB interfaces (hsi0 on Lassen and ipa20).
// Evidence in order of strength: the HCA's own link layer, the interface's address length,
// the PCI class of the HCA, and only then the name.
NicKind port_link(const PortDraft& port, hwloc_obj_t pci) {
  if (port.link_layer == "InfiniBand") return NicKind::InfiniBand;
  if (port.link_layer == "Ethernet") return NicKind::RoCE;
  if (port.netdev != nullptr) {
    const std::size_t bytes = address_bytes(port.netdev);
    if (bytes == 20) return NicKind::InfiniBand;
    if (bytes == 6) return NicKind::RoCE;
  }
  if (pci->attr->pcidev.class_id == kClassInfiniBand) return NicKind::InfiniBand;
  if (pci->attr->pcidev.class_id == kClassEthernet) return NicKind::RoCE;
  if (port.netdev != nullptr) return starts_with(port.netdev->name, "ib") ? NicKind::InfiniBand
                                                                          : NicKind::RoCE;
  return NicKind::InfiniBand;
}

Nic hca_nic(hwloc_topology_t topology, hwloc_obj_t hca, hwloc_obj_t pci,
            const std::vector<hwloc_obj_t>& netdevs) {
  std::map<unsigned, PortDraft> ports;
  for_each_info(hca, [&](const char* name, const char* value) {
    if (const auto n = port_info_number(name, "State")) ports[*n].state = value;
    if (const auto n = port_info_number(name, "LinkLayer")) ports[*n].link_layer = value;
  });

  // A netdev's "Port" info is its dev_port + 1, i.e. the HCA port it runs on.
  std::vector<hwloc_obj_t> unplaced;
  for (hwloc_obj_t netdev : netdevs) {
    const auto port = port_number(info(netdev, "Port"));
    if (port && ports[*port].netdev == nullptr)
      ports[*port].netdev = netdev;
    else if (!port)
      unplaced.push_back(netdev);
  }
  // Old exports (hwloc 1.x, 2.0) have no "Port" info. mlx4 allows IB on port 1 with Ethernet on
  // port 2 but not the reverse, so IPoIB interfaces take the low port numbers.
  std::stable_sort(unplaced.begin(), unplaced.end(), [](hwloc_obj_t a, hwloc_obj_t b) {
    return (address_bytes(a) == 20) > (address_bytes(b) == 20);
  });
  unsigned next = 1;
  for (hwloc_obj_t netdev : unplaced) {
    while (ports.count(next) != 0 && ports[next].netdev != nullptr) ++next;
    ports[next].netdev = netdev;
  }
  if (ports.empty()) ports.emplace(1, PortDraft{});

  Nic nic;
  nic.name = hca->name;
  nic.busid = busid(pci);
  nic.locality = locality_of(topology, pci);
  const bool efa = pci->attr->pcidev.vendor_id == kAmazon || starts_with(nic.name, "rdmap") ||
                   starts_with(nic.name, "efa");
  for (const auto& [number, draft] : ports) {
    NicPort port;
    port.number = number;
    // An export without port states says nothing about them; unknown is not down.
    port.active = !draft.state || *draft.state == kPortActive;
    if (draft.netdev != nullptr) port.netdev = draft.netdev->name;
    port.link = efa ? NicKind::Efa : port_link(draft, pci);
    nic.ports.push_back(port);
  }
  // A VPI HCA may mix IB and Ethernet ports; the NIC is what its first usable port is.
  const auto first_active = std::find_if(nic.ports.begin(), nic.ports.end(),
                                         [](const NicPort& p) { return p.active; });
  nic.kind = first_active != nic.ports.end() ? first_active->link : nic.ports.front().link;
  return nic;
}

Nic netdev_nic(hwloc_topology_t topology, hwloc_obj_t netdev, hwloc_obj_t pci) {
  Nic nic;
  nic.name = netdev->name;
  nic.busid = busid(pci);
  nic.locality = locality_of(topology, pci);
  // hwloc >= 2.9.1 marks Cassini interfaces "Slingshot"; older exports only have the vendor.
  if (subtype(netdev) == "Slingshot" || pci->attr->pcidev.vendor_id == kCray)
    nic.kind = NicKind::Slingshot;
  else if (address_bytes(netdev) == 20)
    nic.kind = NicKind::Other;  // IPoIB whose HCA hwloc did not report: not usable as one
  else
    nic.kind = NicKind::Ethernet;
  NicPort port;
  port.number = 1;
  port.active = true;  // hwloc records no link state for plain interfaces
  port.netdev = nic.name;
  port.link = nic.kind;
  nic.ports.push_back(port);
  return nic;
}

struct PciNetDevices {
  std::vector<hwloc_obj_t> hcas;
  std::vector<hwloc_obj_t> netdevs;
};

}  // namespace

std::vector<Nic> find_nics(hwloc_topology_t topology) {
  // HCA and interface are matched through their PCI function, as NCCL and ibdev2netdev do.
  // Devices without one (bonds, bridges, rxe) cannot be placed and are left out.
  std::map<hwloc_obj_t, PciNetDevices> by_pci;
  for (hwloc_obj_t os = hwloc_get_next_osdev(topology, nullptr); os != nullptr;
       os = hwloc_get_next_osdev(topology, os)) {
    hwloc_obj_t pci = pci_parent(os);
    if (pci == nullptr || os->name == nullptr) continue;
    // hwloc 3 marks an HCA NETWORK|OPENFABRICS: test OPENFABRICS first.
    if (osdev_is(os, OsdevKind::OpenFabrics))
      by_pci[pci].hcas.push_back(os);
    else if (osdev_is(os, OsdevKind::Network))
      by_pci[pci].netdevs.push_back(os);
  }

  std::vector<Nic> nics;
  for (const auto& [pci, devices] : by_pci) {
    if (!devices.hcas.empty()) {
      for (hwloc_obj_t hca : devices.hcas)
        nics.push_back(hca_nic(topology, hca, pci, devices.netdevs));
    } else {
      for (hwloc_obj_t netdev : devices.netdevs)
        nics.push_back(netdev_nic(topology, netdev, pci));
    }
  }
  std::sort(nics.begin(), nics.end(), [](const Nic& a, const Nic& b) {
    return a.busid != b.busid ? a.busid < b.busid : a.name < b.name;
  });
  return nics;
}

}  // namespace hwloc_walk
}  // namespace ddp::plan
