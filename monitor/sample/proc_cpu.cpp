#include "proc_cpu.hpp"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

namespace ddp::monitor {

ProcessTrees::ProcessTrees(std::string proc_root, long exclude)
    : proc_(std::move(proc_root)), exclude_(exclude) {}

std::map<long, std::uint64_t> ProcessTrees::ticks(const std::vector<long>& roots) const {
  // One pass over the user's processes: pid -> stat, parent -> children.
  std::map<long, ProcStat> procs;
  std::multimap<long, long> children;
  DIR* dir = ::opendir(proc_.c_str());
  if (dir) {
    const uid_t me = ::getuid();
    while (const dirent* e = ::readdir(dir)) {
      char* end = nullptr;
      const long pid = std::strtol(e->d_name, &end, 10);
      if (pid <= 0 || *end != '\0' || pid == exclude_) continue;
      struct stat st {};
      if (::fstatat(::dirfd(dir), e->d_name, &st, 0) != 0 || st.st_uid != me) continue;
      if (auto s = read_proc_stat(proc_, pid)) {
        procs[pid] = *s;
        children.emplace(s->ppid, pid);
      }
    }
    ::closedir(dir);
  }
  std::map<long, std::uint64_t> out;
  for (long root : roots) {
    if (!procs.count(root)) continue;
    std::uint64_t total = 0;
    std::vector<long> todo = {root};
    while (!todo.empty()) {
      const long pid = todo.back();
      todo.pop_back();
      const auto it = procs.find(pid);
      if (it == procs.end()) continue;
      total += it->second.ticks;
      const auto range = children.equal_range(pid);
      for (auto c = range.first; c != range.second; ++c) todo.push_back(c->second);
    }
    out[root] = total;
  }
  return out;
}

}  // namespace ddp::monitor
