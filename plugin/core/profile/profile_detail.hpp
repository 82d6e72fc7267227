// Shared by the profile_*.cpp files, not by the profile's users: one file as written (before
// `extends`), and the one merge rule that `extends` and per-node overrides both follow.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "profile.hpp"

namespace ddp::plan::profile_detail {

struct ProfileFile {
  Profile profile;  // files = {its path}
  std::optional<std::string> extends;
  std::string extends_where;  // "file:line:column"
  bool has_nodes = false;     // `nodes:` given, even empty: it replaces the parent's list
};

// "DIR/NAME.yaml": DIR ("." for a bare name), and NAME (nullopt for another kind of name).
std::string dir_of(const std::string& path);
std::optional<std::string> stem_of(const std::string& path);

// One file checked against the schema. Throws PlanError with file:line:column and the fix.
ProfileFile parse_profile_file(const std::string& path);
// The same for a file's text already read; `path` names it in messages.
ProfileFile parse_profile_text(const std::string& path, const std::string& text);

// What one step may read to find its profile. A longer `extends` chain, or more, is a mistake
// or an attack on slurmstepd; every limit is an error that names the file and the fix.
inline constexpr std::size_t kMaxExtendsDepth = 16;          // `extends` followed from one file
inline constexpr std::size_t kMaxProfileFilesPerStep = 256;  // distinct files read
inline constexpr std::size_t kMaxProfileBytesPerStep = std::size_t{16} << 20;

// The profile files a step may use, each read and parsed at most once: a directory, listed once,
// or the texts of a user's chain as srun read them (user_chain.hpp).
class ProfileShelf {
 public:
  using Reader = std::function<std::string(const std::string& path)>;
  static ProfileShelf directory(const std::string& dir);
  // `texts`: path and text of each file, all in one directory.
  static ProfileShelf of_texts(const std::string& dir,
                               const std::vector<std::pair<std::string, std::string>>& texts);

  const std::string& dir() const { return dir_; }
  const std::vector<std::string>& names();  // sorted
  bool has(const std::string& name);
  std::string available();  // "a, b" or "none", for messages
  std::string path_of(const std::string& name) const;
  // The parsed file NAME.yaml of this shelf, or the file at `path` (a user's own, which need
  // not be listed). References stay valid for the shelf's life.
  const ProfileFile& file(const std::string& name);
  const ProfileFile& file_at(const std::string& path);
  // The text a parsed file had (srun sends these), by path.
  const std::string& text_at(const std::string& path) const;

 private:
  struct Entry {
    std::string text;
    ProfileFile file;
  };
  ProfileShelf(std::string dir, Reader read) : dir_(std::move(dir)), read_(std::move(read)) {}

  std::string dir_;
  Reader read_;
  std::optional<std::vector<std::string>> names_;
  std::map<std::string, Entry> by_path_;
  std::size_t bytes_ = 0;
};

// The file and the ones it `extends` (from the same shelf), merged and checked.
Profile load_chain(const ProfileFile& first, ProfileShelf& shelf);

// NAME from the shelf with its chain; `what` names where NAME came from, for messages.
Profile load_named(ProfileShelf& shelf, const std::string& name, const std::string& what);

// `over` wins field by field; env merges by name with `over` winning (a parent's variable keeps
// its place, a new one goes last); hca_list travels with hca.
void apply_settings(NodeSettings& base, const NodeSettings& over);
void apply_preflight(PreflightSettings& base, const PreflightSettings& over);

// An HCA choice only steers NCCL's own InfiniBand transport; with ofi or socket it would be
// silently ignored, so the combination is refused where it ends up (after extends, per node).
void check_network(const NodeSettings& settings, const std::string& where, const std::string& what);

}  // namespace ddp::plan::profile_detail
