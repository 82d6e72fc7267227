// Which profile a step uses: the user's own file (only where the site allows it), a name the user
// gave, the site's default, or the profile whose match fits this cluster and node.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "options.hpp"
#include "profile.hpp"

namespace ddp::plan {

// Reads a user's profile file; the plugin passes one that reads with the user's rights.
using ProfileFileReader = std::function<Profile(const std::string& path)>;

ProfileChoice choose_profile(const UserOptions& options, const PlugstackConfig& config,
                             const std::optional<std::string>& cluster_name,
                             const std::string& hostname, const ProfileFileReader& read_user_file);

}  // namespace ddp::plan
