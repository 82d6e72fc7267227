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

namespace ddp::plan {
namespace {

// Far above any node's file (an 8-GPU, 8-HCA, 192-core node writes ~6 KB): a bigger file is
// not ours.
constexpr off_t kMaxFileBytes = 1 << 22;

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

std::string errno_text(int err) { return std::strerror(err); }

// A directory or file only root (the owner) may change: anyone else who could write there could
// make every later step pin tasks and choose NICs by a topology of their making.
std::string unsafe_because(const struct stat& st, uid_t owner, const char* what) {
  if (st.st_uid != owner)
    return std::string(what) + " is owned by uid " + std::to_string(st.st_uid) + ", not " +
           std::to_string(owner);
  if (st.st_mode & (S_IWGRP | S_IWOTH)) return std::string(what) + " is writable by others";
  return "";
}

std::string dir_problem(const NodeFactsStore& store) {
  struct stat st{};
  if (lstat(store.dir.c_str(), &st) != 0)
    return errno == ENOENT ? "there is none yet"
                           : "its directory cannot be read (" + errno_text(errno) + ")";
  if (!S_ISDIR(st.st_mode)) return "its directory is not a directory (or is a symbolic link)";
  return unsafe_because(st, store.owner, "its directory");
}

struct FileRead {
  std::optional<DecodedNodeFacts> facts;
  std::string problem;  // why not, when facts is unset
};

FileRead read_file(const NodeFactsStore& store) {
  FileRead out;
  if (std::string p = dir_problem(store); !p.empty()) {
    out.problem = p;
    return out;
  }
  const int fd = open(store.path().c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
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
  } else if (std::string p = unsafe_because(st, store.owner, "it"); !p.empty()) {
    out.problem = p;
  } else {
    text.resize(static_cast<std::size_t>(st.st_size));
    std::size_t got = 0;
    while (got < text.size()) {
      const ssize_t n = read(fd, text.data() + got, text.size() - got);
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

// Written next to its final name and renamed over it, so a reader sees the old file or the new
// one, never a part. Returns why not, "" on success.
std::string write_file(const NodeFactsStore& store, const std::string& text) {
  if (mkdir(store.dir.c_str(), 0755) != 0 && errno != EEXIST)
    return "cannot create " + store.dir + " (" + errno_text(errno) + ")";
  if (std::string p = dir_problem(store); !p.empty()) return "will not write there: " + p;
  std::string tmp = store.dir + "/.node-facts.XXXXXX";
  const int fd = mkostemp(tmp.data(), O_CLOEXEC);
  if (fd < 0) return "cannot create a file in " + store.dir + " (" + errno_text(errno) + ")";
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n <= 0) break;
    done += static_cast<std::size_t>(n);
  }
  // Readable by all: user_init and ddp-plan run as the job's user.
  const bool ok = done == text.size() && fchmod(fd, 0644) == 0;
  const int err = errno;
  if (close(fd) != 0 || !ok || rename(tmp.c_str(), store.path().c_str()) != 0) {
    const int e = ok ? errno : err;
    unlink(tmp.c_str());
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
    out.how += "; node facts file " + store.path() + " " + why + ": " +
               (failed.empty() ? "rewritten" : failed);
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
