// Finding profile files and following `extends`: a child's values override its parent's, so a
// site profile says only what differs from the base it builds on.
#include <dirent.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include "error.hpp"
#include "parse.hpp"
#include "profile_detail.hpp"

namespace ddp::plan {
namespace {

using profile_detail::ProfileFile;

const std::string kExt = ".yaml";

std::string path_in(const std::string& dir, const std::string& name) {
  return dir + (!dir.empty() && dir.back() == '/' ? "" : "/") + name + kExt;
}

std::string dir_of(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string available(const std::string& dir) {
  std::string out;
  for (const std::string& name : list_profiles(dir)) out += (out.empty() ? "" : ", ") + name;
  return out.empty() ? "none" : out;
}

bool has_profile(const std::string& dir, const std::string& name) {
  const auto names = list_profiles(dir);
  return std::find(names.begin(), names.end(), name) != names.end();
}

Profile merged(Profile base, const ProfileFile& file) {
  const Profile& child = file.profile;
  base.name = child.name;
  if (!child.description.empty()) base.description = child.description;
  base.files.insert(base.files.begin(), child.files.begin(), child.files.end());
  base.match = child.match;
  if (child.port_range) base.port_range = child.port_range;
  if (child.host_suffix) base.host_suffix = child.host_suffix;
  profile_detail::apply_preflight(base.preflight, child.preflight);
  profile_detail::apply_settings(base.settings, child.settings);
  if (file.has_nodes) base.nodes = child.nodes;
  if (child.monitor.enabled) base.monitor.enabled = child.monitor.enabled;
  if (child.monitor.interval) base.monitor.interval = child.monitor.interval;
  if (child.monitor.dir) base.monitor.dir = child.monitor.dir;
  return base;
}

// `chain` holds the names below this one, to name a cycle in full.
Profile with_parents(const ProfileFile& file, const std::string& dir,
                     std::vector<std::string> chain) {
  if (!file.extends) return file.profile;
  const std::string& name = file.profile.name;
  const std::string& parent = *file.extends;
  const std::string at = file.extends_where + ": ";
  if (parent == name)
    throw PlanError(at + "profile " + quoted(name) +
                    " extends itself. Fix: name the profile it "
                    "builds on, or delete extends");
  chain.push_back(name);
  if (std::find(chain.begin(), chain.end(), parent) != chain.end()) {
    std::string cycle;
    for (const std::string& n : chain) cycle += n + " -> ";
    throw PlanError(at + "extends " + quoted(parent) + " closes a cycle: " + cycle + parent +
                    ". Fix: let one profile of the cycle extend none of the others");
  }
  if (!has_profile(dir, parent))
    throw PlanError(at + "extends " + quoted(parent) + ", but " + dir + " has no " + parent + kExt +
                    "; available: " + available(dir) +
                    ". Fix: name one of them, or "
                    "install " +
                    parent + kExt + " next to this file");
  const Profile base =
      with_parents(profile_detail::parse_profile_file(path_in(dir, parent)), dir, chain);
  return merged(base, file);
}

// Settings that only clash once merged are checked on the result, for the profile and for each
// node override as it will apply.
Profile checked(Profile p) {
  profile_detail::check_network(p.settings, p.files.front(), "profile " + quoted(p.name));
  for (const NodeOverride& o : p.nodes) {
    NodeSettings s = p.settings;
    profile_detail::apply_settings(s, o.settings);
    profile_detail::check_network(s, o.where, "the override for " + quoted(o.match));
  }
  return p;
}

}  // namespace

namespace profile_detail {

Profile load_named(const std::string& dir, const std::string& name, const std::string& what) {
  try {
    check_profile_name(what, name);
  } catch (const PlanError& e) {
    throw PlanError(std::string(e.what()) + ". Fix: use one of the profiles in " + dir + ": " +
                    available(dir));
  }
  if (!has_profile(dir, name))
    throw PlanError(what + "=" + quoted(name) + " names no profile in " + dir + "; available: " +
                    available(dir) + ". Fix: use one of them, or ask the admin to install " + name +
                    kExt + " there");
  return checked(with_parents(parse_profile_file(path_in(dir, name)), dir, {}));
}

}  // namespace profile_detail

Profile load_profile(const std::string& dir, const std::string& name) {
  return profile_detail::load_named(dir, name, "profile");
}

Profile load_profile_file(const std::string& path) {
  return checked(with_parents(profile_detail::parse_profile_file(path), dir_of(path), {}));
}

std::vector<std::string> list_profiles(const std::string& dir) {
  std::unique_ptr<DIR, int (*)(DIR*)> d(::opendir(dir.c_str()), ::closedir);
  if (!d) {
    const int err = errno;
    if (err == ENOENT) return {};
    throw PlanError("profile directory " + dir + " cannot be read: " + std::strerror(err) +
                    ". Fix: make it a directory readable by all users, e.g. mode 755");
  }
  std::vector<std::string> names;
  while (const dirent* entry = ::readdir(d.get())) {
    const std::string file = entry->d_name;
    // Hidden files are editors' and package managers' leftovers, never profiles.
    if (file.size() <= kExt.size() || file.front() == '.' ||
        file.compare(file.size() - kExt.size(), kExt.size(), kExt) != 0)
      continue;
    const std::string name = file.substr(0, file.size() - kExt.size());
    try {
      check_profile_name(path_in(dir, name) + ": the file name", name);
    } catch (const PlanError& e) {
      throw PlanError(std::string(e.what()) + ". Fix: rename the file, or move it out of " + dir);
    }
    names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace ddp::plan
