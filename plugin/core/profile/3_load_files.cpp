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
#include "profile_yaml.hpp"

namespace ddp::plan {
namespace {

using profile_detail::dir_of;
using profile_detail::ProfileFile;
using profile_detail::ProfileShelf;

const std::string kExt = ".yaml";

std::string path_in(const std::string& dir, const std::string& name) {
  return dir + (!dir.empty() && dir.back() == '/' ? "" : "/") + name + kExt;
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
  if (child.watch.enabled) base.watch.enabled = child.watch.enabled;
  if (child.watch.timeout) base.watch.timeout = child.watch.timeout;
  if (child.watch.retries) base.watch.retries = child.watch.retries;
  return base;
}

// "a -> b -> c": at most kMaxExtendsDepth + 1 names of at most 64 characters.
std::string chain_text(const std::vector<const ProfileFile*>& chain, const std::string& last) {
  std::string text;
  for (const ProfileFile* f : chain) text += f->profile.name + " -> ";
  return text + last;
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

std::string dir_of(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::optional<std::string> stem_of(const std::string& path) {
  const std::string base = path.substr(path.rfind('/') + 1);
  if (base.size() <= kExt.size() || base.compare(base.size() - kExt.size(), kExt.size(), kExt) != 0)
    return std::nullopt;
  return base.substr(0, base.size() - kExt.size());
}

ProfileShelf ProfileShelf::directory(const std::string& dir) {
  return ProfileShelf(dir, profile_yaml::read_profile_text);
}

ProfileShelf ProfileShelf::of_texts(const std::string& dir,
                                    const std::vector<std::pair<std::string, std::string>>& texts) {
  auto files = std::make_shared<std::map<std::string, std::string>>(texts.begin(), texts.end());
  ProfileShelf shelf(dir, [files](const std::string& path) {
    const auto it = files->find(path);
    if (it == files->end())
      throw PlanError(path + ": is not among the profile files srun sent with the step");
    return it->second;
  });
  shelf.names_.emplace();
  for (const auto& entry : *files) shelf.names_->push_back(stem_of(entry.first).value_or(""));
  std::sort(shelf.names_->begin(), shelf.names_->end());
  return shelf;
}

const std::vector<std::string>& ProfileShelf::names() {
  if (!names_) names_ = list_profiles(dir_);
  return *names_;
}

bool ProfileShelf::has(const std::string& name) {
  const auto& n = names();
  return std::binary_search(n.begin(), n.end(), name);
}

std::string ProfileShelf::available() {
  constexpr std::size_t kNamed = 20;  // a message names a few, and counts the rest
  const auto& all = names();
  std::string out;
  for (std::size_t i = 0; i < all.size() && i < kNamed; ++i) out += (i ? ", " : "") + all[i];
  if (all.size() > kNamed) out += " and " + std::to_string(all.size() - kNamed) + " more";
  return out.empty() ? "none" : out;
}

std::string ProfileShelf::path_of(const std::string& name) const { return path_in(dir_, name); }

const ProfileFile& ProfileShelf::file(const std::string& name) { return file_at(path_of(name)); }

const ProfileFile& ProfileShelf::file_at(const std::string& path) {
  if (const auto it = by_path_.find(path); it != by_path_.end()) return it->second.file;
  if (by_path_.size() >= kMaxProfileFilesPerStep)
    throw PlanError(path + ": finding this step's profile would read more than " +
                    std::to_string(kMaxProfileFilesPerStep) +
                    " profile files. Fix: keep fewer profiles in " + dir_ +
                    " (a site needs a few), or name one (--ddp-profile, default_profile)");
  std::string text = read_(path);
  if (text.size() > kMaxProfileBytesPerStep - bytes_)
    throw PlanError(path + ": finding this step's profile would read more than " +
                    std::to_string(kMaxProfileBytesPerStep >> 20) +
                    " MiB of profile files. Fix: keep profiles small (a few kilobytes each)");
  bytes_ += text.size();
  ProfileFile file = parse_profile_text(path, text);
  const auto [it, added] = by_path_.emplace(path, Entry{std::move(text), std::move(file)});
  return it->second.file;
}

const std::string& ProfileShelf::text_at(const std::string& path) const {
  return by_path_.at(path).text;
}

Profile load_chain(const ProfileFile& first, ProfileShelf& shelf) {
  std::vector<const ProfileFile*> chain = {&first};
  while (chain.back()->extends) {
    const ProfileFile& file = *chain.back();
    const std::string& name = file.profile.name;
    const std::string& parent = *file.extends;
    const std::string at = file.extends_where + ": ";
    if (parent == name)
      throw PlanError(at + "profile " + quoted(name) +
                      " extends itself. Fix: name the profile it builds on, or delete extends");
    for (const ProfileFile* below : chain)
      if (below->profile.name == parent)
        throw PlanError(at + "extends " + quoted(parent) + " closes a cycle: " +
                        chain_text(chain, parent) +
                        ". Fix: let one profile of the cycle extend none of the others");
    if (chain.size() > kMaxExtendsDepth)
      throw PlanError(at + "extends " + quoted(parent) + ", which is more than " +
                      std::to_string(kMaxExtendsDepth) + " levels of extends above " +
                      quoted(first.profile.name) + " (" + chain_text(chain, parent) +
                      "). Fix: build on fewer profiles; merge some of the chain into one file");
    if (!shelf.has(parent))
      throw PlanError(at + "extends " + quoted(parent) + ", but " + shelf.dir() + " has no " +
                      parent + kExt + "; available: " + shelf.available() +
                      ". Fix: name one of them, or install " + parent + kExt +
                      " next to this file");
    chain.push_back(&shelf.file(parent));
  }
  Profile p = chain.back()->profile;
  for (std::size_t i = chain.size() - 1; i-- > 0;) p = merged(std::move(p), *chain[i]);
  return checked(std::move(p));
}

Profile load_named(ProfileShelf& shelf, const std::string& name, const std::string& what) {
  try {
    check_profile_name(what, name);
  } catch (const PlanError& e) {
    throw PlanError(std::string(e.what()) + ". Fix: use one of the profiles in " + shelf.dir() +
                    ": " + shelf.available());
  }
  if (!shelf.has(name))
    throw PlanError(what + "=" + quoted(name) + " names no profile in " + shelf.dir() +
                    "; available: " + shelf.available() +
                    ". Fix: use one of them, or ask the admin to install " + name + kExt +
                    " there");
  return load_chain(shelf.file(name), shelf);
}

}  // namespace profile_detail

Profile load_profile(const std::string& dir, const std::string& name) {
  ProfileShelf shelf = ProfileShelf::directory(dir);
  return profile_detail::load_named(shelf, name, "profile");
}

Profile load_profile_file(const std::string& path) {
  ProfileShelf shelf = ProfileShelf::directory(dir_of(path));
  return profile_detail::load_chain(shelf.file_at(path), shelf);
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
