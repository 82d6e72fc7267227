// Profiles as `ddp-plan --check-profile` shows them: JSON, one shape for a whole profile and for
// the profile as one node gets it, so admins can check a file before installing it.
#pragma once

#include <nlohmann/json.hpp>

#include "profile.hpp"

namespace ddp::plan {

// The profile with its `extends` applied, its match and its per-node overrides.
nlohmann::json profile_to_json(const Profile& profile);

// What one node gets: name, why, files, the override applied, and the settings in effect.
nlohmann::json profile_to_json(const ResolvedProfile& resolved);

}  // namespace ddp::plan
