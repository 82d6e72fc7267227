// Shared by the profile_*.cpp files, not by the profile's users: one file as written (before
// `extends`), and the one merge rule that `extends` and per-node overrides both follow.
#pragma once

#include <optional>
#include <string>

#include "profile.hpp"

namespace ddp::plan::profile_detail {

struct ProfileFile {
  Profile profile;  // files = {its path}
  std::optional<std::string> extends;
  std::string extends_where;  // "file:line:column"
  bool has_nodes = false;     // `nodes:` given, even empty: it replaces the parent's list
};

// One file checked against the schema. Throws PlanError with file:line:column and the fix.
ProfileFile parse_profile_file(const std::string& path);

// DIR/NAME.yaml with its `extends` chain; `what` names where NAME came from, for messages.
Profile load_named(const std::string& dir, const std::string& name, const std::string& what);

// `over` wins field by field; env merges by name with `over` winning (a parent's variable keeps
// its place, a new one goes last); hca_list travels with hca.
void apply_settings(NodeSettings& base, const NodeSettings& over);
void apply_preflight(PreflightSettings& base, const PreflightSettings& over);

// An HCA choice only steers NCCL's own InfiniBand transport; with ofi or socket it would be
// silently ignored, so the combination is refused where it ends up (after extends, per node).
void check_network(const NodeSettings& settings, const std::string& where, const std::string& what);

}  // namespace ddp::plan::profile_detail
