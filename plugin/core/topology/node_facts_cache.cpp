#include "node_facts_cache.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <sstream>

#include "error.hpp"
#include "trusted_dir.hpp"

namespace ddp::plan {
namespace {

// Far above any node's file (an 8-GPU, 8-HCA, 192-core node writes ~6 KB): a bigger file is
// not ours.
constexpr off_t kMaxFileBytes = 1 << 22;
constexpr const char* kFileName = "node-facts";  // NodeFactsStore::path()'s last component

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

std::string errno_text(int err) { return std::strerror(err); }

// A file only root (the owner) may change: anyone else who could write it could make every
// later step pin tasks and choose NICs by a topology of their making. A second name (a hard link
// made in a sticky directory) could be any file of root's, which is never ours to read.
std::string unsafe_because(const struct stat& st, uid_t owner) {
  if (st.st_uid != owner)
    return "it is owned by uid " + std::to_string(st.st_uid) + ", not " + std::to_string(owner);
  if (st.st_mode & (S_IWGRP | S_IWOTH)) return "it is writable by others";
  if (st.st_nlink != 1) return "it has other names (hard links)";
  return "";
}

struct FileRead {
  std::optional<DecodedNodeFacts> facts;
  std::string problem;  // why not, when facts is unset
};

FileRead read_file(const NodeFactsStore& store) {
  FileRead out;
  // The directory is held open and the file named only through it (trusted_dir.hpp): a component
  // of the path swapped for a symbolic link after the check redirects nothing.
  const TrustedDir dir = open_trusted_dir(store.dir, store.owner, /*make_missing=*/false);
  if (!dir) {
    out.problem = dir.missing() ? "there is none yet" : dir.problem();
    return out;
  }
  // O_NONBLOCK: a FIFO in place of the file fails the type check below instead of blocking.
  const int fd = openat(dir.fd(), kFileName, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    out.problem = errno == ENOENT ? "there is none yet" : "it cannot be opened (" + errno_text(errno) + ")";
    return out;
  }
  struct stat st{};
  std::string text;
  if (fstat(fd, &st) != 0) {
    out.problem = "it cannot be examined (" + errno_text(errno) + ")";
  } else if (!S_ISREG(st.st_mode) || st.st_size > kMaxFileBytes) {
    out.problem = "it is not a regular file of node facts";
  } else if (std::string p = unsafe_because(st, store.owner); !p.empty()) {
    out.problem = p;
  } else {
    text.resize(static_cast<std::size_t>(st.st_size));
    std::size_t got = 0;
    while (got < text.size()) {
      const ssize_t n = read(fd, text.data() + got, text.size() - got);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      got += static_cast<std::size_t>(n);
    }
    if (got != text.size()) out.problem = "it could not be read whole";
  }
  close(fd);
  if (!out.problem.empty()) return out;
  try {
    out.facts = decode_node_facts(text);
  } catch (const PlanError& e) {
    out.problem = std::string("it is damaged: ") + e.what();
  }
  return out;
}

// A name for the new file no one else holds: only root writes in the directory, and in a sticky
// one O_EXCL refuses a name another user made first.
int create_temp(int dir, std::string& name) {
  for (unsigned attempt = 0; attempt < 100; ++attempt) {
    name = ".node-facts." + std::to_string(getpid()) + "." + std::to_string(attempt);
    const int fd =
        openat(dir, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  errno = EEXIST;
  return -1;
}

// Written next to its final name and renamed over it, so a reader sees the old file or the new
// one, never a part. Returns why not, "" on success.
std::string write_file(const NodeFactsStore& store, const std::string& text) {
  const TrustedDir dir = open_trusted_dir(store.dir, store.owner, /*make_missing=*/true);
  if (!dir) return dir.problem();
  std::string tmp;
  const int fd = create_temp(dir.fd(), tmp);
  if (fd < 0) return "cannot create a file in " + store.dir + " (" + errno_text(errno) + ")";
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<std::size_t>(n);
  }
  // Readable by all: user_init and ddp-plan run as the job's user.
  const bool ok = done == text.size() && fchmod(fd, 0644) == 0;
  const int err = errno;
  if (close(fd) != 0 || !ok || renameat(dir.fd(), tmp.c_str(), dir.fd(), kFileName) != 0) {
    const int e = ok ? errno : err;
    unlinkat(dir.fd(), tmp.c_str(), 0);
    return "cannot write " + store.path() + " (" + errno_text(e) + ")";
  }
  return "";
}

// "4: ACTIVE" -> active. hwloc reads the same file when it loads.
void refresh_port_states(Topology& t) {
  for (auto& nic : t.nics) {
    if (!nic.openfabrics()) continue;
    for (auto& port : nic.ports) {
      std::ifstream in("/sys/class/infiniband/" + nic.name + "/ports/" +
                       std::to_string(port.number) + "/state");
      int state = 0;
      if (in >> state) port.active = state == 4;
    }
  }
}

NodeTopology load_and_store(const NodeFactsStore& store, const std::optional<std::string>& xml_path,
                            const NodeFactsKey& key, bool may_write, const std::string& why,
                            Clock::time_point start) {
  NodeTopology out;
  out.topology = load_topology(xml_path);
  out.how = "loaded with hwloc (" + ms_text(out.topology.load_ms) + ")";
  if (store.dir.empty()) {
    out.how += "; node_facts_dir=off";
  } else if (may_write) {
    const std::string failed = write_file(store, encode_node_facts(key, out.topology));
    // A directory refused for reading is refused for writing too: said once.
    const bool said = !failed.empty() && why.find(failed) != std::string::npos;
    out.how += "; node facts file " + store.path() + " " + why + ": " +
               (failed.empty() ? "rewritten" : said ? "not rewritten" : failed);
  } else {
    out.how += "; node facts file " + store.path() + " " + why;
  }
  out.ms = ms_since(start);
  return out;
}

}  // namespace

std::string ms_text(double ms) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(ms < 1 ? 2 : 1) << ms << " ms";
  return s.str();
}

NodeTopology node_topology(const NodeFactsStore& store, const std::optional<std::string>& xml_path,
                           bool may_write) {
  const auto start = Clock::now();
  const NodeFactsKey key = current_node_facts_key(xml_path);
  if (store.dir.empty()) return load_and_store(store, xml_path, key, false, "", start);
  FileRead file = read_file(store);
  if (!file.facts) return load_and_store(store, xml_path, key, may_write, "not used: " + file.problem, start);
  if (const std::string changed = file.facts->key.first_difference(key); !changed.empty())
    return load_and_store(store, xml_path, key, may_write, "stale: " + changed + " changed", start);
  NodeTopology out;
  out.topology = std::move(file.facts->topology);
  if (!xml_path) refresh_port_states(out.topology);
  out.from_file = true;
  out.ms = ms_since(start);
  out.topology.load_ms = out.ms;
  out.how = "node facts file " + store.path() + " (" + ms_text(out.ms) + ")";
  return out;
}

NodeTopology rebuild_node_facts(const NodeFactsStore& store, const std::optional<std::string>& xml_path) {
  return load_and_store(store, xml_path, current_node_facts_key(xml_path), true, "rebuilt", Clock::now());
}

}  // namespace ddp::plan
