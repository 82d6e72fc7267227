#include "checks.hpp"

#include <dirent.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>

#include "ddp/env_contract.hpp"

namespace ddp::preflight {
namespace {

namespace c = ddp::contract;

std::optional<std::string> setting(const EnvLookup& env, const char* name) {
  auto value = env(name);
  if (value && value->empty()) return std::nullopt;
  return value;
}

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::string item;
  std::istringstream in(text);
  while (std::getline(in, item, sep))
    if (!item.empty()) out.push_back(item);
  return out;
}

std::string join(const std::vector<std::string>& items, const char* sep) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : sep) + i;
  return out;
}

void add_once(std::vector<std::string>& list, const std::string& item) {
  if (std::find(list.begin(), list.end(), item) == list.end()) list.push_back(item);
}

// Why NCCL or Gloo could not use interface `name`, or nothing when it is fine.
std::optional<std::string> interface_problem(const plan::NetFacts& net, const std::string& name) {
  const plan::NetInterface* i = net.find(name);
  if (!i) return "no interface " + name + " on this node";
  if (!i->up) return name + " is down";
  if (!i->has_ipv4) return name + " has no IPv4 address";
  return std::nullopt;
}

Check finished(Check c, const std::vector<std::string>& good, const std::vector<std::string>& bad,
               const std::string& none) {
  if (!bad.empty()) {
    c.status = Status::Failed;
    c.detail = join(bad, "; ");
  } else if (!good.empty()) {
    c.status = Status::Ok;
    c.detail = join(good, ", ");
  } else {
    c.status = Status::Skipped;
    c.detail = none;
  }
  return c;
}

std::optional<std::string> read_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.pop_back();
  return line;
}

bool active(const std::string& state) { return state.find("ACTIVE") != std::string::npos; }

}  // namespace

Check check_interfaces(const EnvLookup& env, const plan::NetFacts& net) {
  std::vector<std::string> good, bad;
  if (const auto gloo = setting(env, c::kGlooSocketIfname))
    for (const auto& name : split(*gloo, ',')) {
      if (const auto problem = interface_problem(net, name))
        bad.push_back(std::string(c::kGlooSocketIfname) + "=" + *gloo + ": " + *problem);
      else
        add_once(good, name);
    }
  // NCCL's syntax: "^a,b" excludes (nothing to check), "=a,b" names exactly, "a,b" are prefixes.
  const auto nccl = setting(env, c::kNcclSocketIfname);
  if (nccl && nccl->front() != '^') {
    const bool exact = nccl->front() == '=';
    for (const auto& entry : split(exact ? nccl->substr(1) : *nccl, ',')) {
      std::vector<std::string> names;
      for (const auto& i : net.interfaces)
        if (exact ? i.name == entry : i.name.compare(0, entry.size(), entry) == 0)
          names.push_back(i.name);
      std::optional<std::string> problem = interface_problem(net, entry);
      for (const auto& name : names) {
        problem = interface_problem(net, name);
        if (!problem) {
          add_once(good, name);
          break;
        }
      }
      if (problem && !exact && names.empty()) problem = "no interface named " + entry + "* on this node";
      if (problem) bad.push_back(std::string(c::kNcclSocketIfname) + "=" + *nccl + ": " + *problem);
    }
  }
  return finished({"interfaces", Status::Skipped, ""}, good, bad, "none chosen: NCCL and Gloo pick one themselves");
}

std::vector<unsigned> sysfs_ports(const std::string& root, const std::string& hca) {
  std::vector<unsigned> ports;
  std::unique_ptr<DIR, int (*)(DIR*)> d(::opendir((root + "/" + hca + "/ports").c_str()), ::closedir);
  if (!d) return ports;
  while (const dirent* e = ::readdir(d.get())) {
    const std::string name = e->d_name;
    if (!name.empty() && name.size() < 4 && name.find_first_not_of("0123456789") == std::string::npos)
      ports.push_back(static_cast<unsigned>(std::stoul(name)));
  }
  std::sort(ports.begin(), ports.end());
  return ports;
}

PortState sysfs_port_state(const std::string& root) {
  return [root](const std::string& hca, unsigned port) {
    return read_line(root + "/" + hca + "/ports/" + std::to_string(port) + "/state");
  };
}

Check check_hcas(const EnvLookup& env, const std::string& root) {
  // "mlx5_0:1" entries: DDP_NIC holds "HCA:PORT PATH", NCCL_IB_HCA NCCL's list syntax.
  std::vector<std::string> entries;
  if (const auto nic = setting(env, c::kDdpNic)) add_once(entries, nic->substr(0, nic->find(' ')));
  const auto ib = setting(env, c::kNcclIbHca);
  if (ib && ib->front() != '^')
    for (const auto& e : split(ib->front() == '=' ? ib->substr(1) : *ib, ',')) add_once(entries, e);
  const PortState state = sysfs_port_state(root);
  std::vector<std::string> good, bad;
  for (const auto& entry : entries) {
    const auto colon = entry.find(':');
    const std::string hca = entry.substr(0, colon);
    std::vector<unsigned> ports = sysfs_ports(root, hca);
    if (ports.empty()) {
      bad.push_back("no InfiniBand HCA " + hca + " on this node (" + root + ")");
      continue;
    }
    if (colon != std::string::npos) {
      const std::string port = entry.substr(colon + 1);
      if (port.empty() || port.size() > 3 || port.find_first_not_of("0123456789") != std::string::npos) {
        bad.push_back(entry + " is not HCA:PORT");
        continue;
      }
      ports = {static_cast<unsigned>(std::stoul(port))};
    }
    std::string seen;
    bool up = false;
    for (unsigned p : ports) {
      const auto s = state(hca, p);
      seen += (seen.empty() ? "" : ", ") + hca + ":" + std::to_string(p) + " " + s.value_or("missing");
      if (s && active(*s)) up = true;
    }
    if (up)
      add_once(good, entry + " ACTIVE");
    else
      bad.push_back(entry + " is not ACTIVE (" + seen + ")");
  }
  return finished({"hcas", Status::Skipped, ""}, good, bad, "none chosen");
}

std::string normal_bus_id(std::string id) {
  for (char& ch : id) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  const auto colon = id.find(':');
  if (colon != std::string::npos && colon > 4) id.erase(0, colon - 4);
  return id;
}

Check check_gpus(const EnvLookup& env, const Context& ctx, const CudaDevices& cuda,
                 std::string& bus_id) {
  Check check{"gpus", Status::Skipped, ""};
  auto visible = setting(env, c::kCudaVisibleDevices);
  if (visible && *visible == "NoDevFiles") visible.reset();  // Slurm's "no GPUs here"
  const auto expected = setting(env, c::kDdpGpuBusId);
  const bool given = visible || setting(env, c::kDdpGpu);
  const auto fail = [&](const std::string& why) {
    check.status = Status::Failed;
    check.detail = why;
    return check;
  };
  if (!cuda.loaded) {
    check.detail = given ? "not checked: no CUDA driver here (" + cuda.why_not + ")"
                         : "no GPUs in this step";
    return check;
  }
  const std::size_t seen = cuda.bus_ids.size();
  const std::string sees = "CUDA sees " + std::to_string(seen);
  if (visible) {
    const std::size_t named = split(*visible, ',').size();
    if (named != seen)
      return fail(std::string(c::kCudaVisibleDevices) + "=" + *visible + " names " +
                  std::to_string(named) + " GPU(s), but " + sees);
  }
  if (!given) {
    check.detail = "no GPUs given to this step (" + sees + ")";
    return check;
  }
  if (static_cast<std::size_t>(ctx.local_rank) >= seen)
    return fail("LOCAL_RANK=" + std::to_string(ctx.local_rank) + ", but " + sees +
                " device(s): cuda:" + std::to_string(ctx.local_rank) + " does not exist");
  bus_id = normal_bus_id(cuda.bus_ids[ctx.local_rank]);
  const std::string device = "cuda:" + std::to_string(ctx.local_rank);
  if (expected && normal_bus_id(*expected) != bus_id)
    return fail(device + " is " + bus_id + ", but this rank was given " + c::kDdpGpuBusId + "=" +
                *expected + " (is CUDA_DEVICE_ORDER=PCI_BUS_ID set?)");
  check.status = Status::Ok;
  check.detail = device + " " + bus_id;
  return check;
}

const char* status_name(Status s) {
  switch (s) {
    case Status::Ok: return "ok";
    case Status::Failed: return "failed";
    case Status::Skipped: return "skipped";
  }
  return "skipped";
}

}  // namespace ddp::preflight
