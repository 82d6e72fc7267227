// What a node's topology was made from, read fresh for every step that uses the cache: a handful
// of small /proc and /sys reads and one directory listing, microseconds in all.
#include <dirent.h>
#include <dlfcn.h>
#include <sys/stat.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

#include "node_facts.hpp"
#include "topology_hwloc.hpp"
#include "version.hpp"

namespace ddp::plan {
namespace {

// The first line of a small file, "" when it cannot be read (then it matches no cache written
// while it could).
std::string first_line(const char* path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

std::string file_identity(const std::string& path) {
  struct stat st{};
  if (stat(path.c_str(), &st) != 0) return "unreadable";
  std::ostringstream s;
  s << st.st_size << ":" << st.st_mtim.tv_sec << "." << st.st_mtim.tv_nsec << ":" << st.st_ino;
  return s.str();
}

// FNV-1a over the sorted names: which PCI functions exist, not what they hold.
std::string pci_digest() {
  std::vector<std::string> names;
  if (DIR* dir = opendir("/sys/bus/pci/devices")) {
    while (const dirent* e = readdir(dir))
      if (e->d_name[0] != '.') names.emplace_back(e->d_name);
    closedir(dir);
  }
  std::sort(names.begin(), names.end());
  std::uint64_t h = 1469598103934665603ull;
  for (const auto& n : names) {
    for (unsigned char c : n) h = (h ^ c) * 1099511628211ull;
    h = (h ^ '\n') * 1099511628211ull;
  }
  std::ostringstream s;
  s << names.size() << ":" << std::hex << h;
  return s.str();
}

// The hwloc library this process runs with: a package upgrade replaces the file, and a new hwloc
// may find devices differently even at the same API version.
std::string hwloc_identity() {
  std::string out = "api" + std::to_string(hwloc_get_api_version());
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&hwloc_topology_init), &info) != 0 && info.dli_fname) {
    char real[PATH_MAX];
    const std::string path = realpath(info.dli_fname, real) ? real : info.dli_fname;
    out += ":" + path + ":" + file_identity(path);
  }
  return out;
}

}  // namespace

NodeFactsKey current_node_facts_key(const std::optional<std::string>& xml_path) {
  NodeFactsKey k;
  k.source = xml_path ? "xml:" + *xml_path + ":" + file_identity(*xml_path) : "live";
  k.boot_id = first_line("/proc/sys/kernel/random/boot_id");
  k.cpus_online = first_line("/sys/devices/system/cpu/online");
  k.pci_devices = pci_digest();
  k.hwloc = hwloc_identity();
  k.plugin = kVersion;
  return k;
}

}  // namespace ddp::plan
