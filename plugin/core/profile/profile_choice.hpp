// Which profile a step uses: the user's own file (only where the site allows it), a name the user
// gave, the site's default, or the profile whose match fits this cluster and node.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "options.hpp"
#include "profile.hpp"

namespace ddp::plan {

// A user's profile file by its path: in slurmstepd, the copy srun sent (user_chain.hpp).
using ProfileFileReader = std::function<Profile(const std::string& path)>;

// Throws PlanError, naming the site's profiles, when the user named a file and the site allows
// only its own profiles.
void check_user_profile_allowed(const UserOptions& options, const PlugstackConfig& config);

ProfileChoice choose_profile(const UserOptions& options, const PlugstackConfig& config,
                             const std::optional<std::string>& cluster_name,
                             const std::string& hostname, const ProfileFileReader& read_user_file);

}  // namespace ddp::plan
