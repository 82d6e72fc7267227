#include "profile_choice.hpp"

#include "error.hpp"
#include "parse.hpp"

namespace ddp::plan {

void check_user_profile_allowed(const UserOptions& options, const PlugstackConfig& config) {
  if (!options.profile_file || config.user_profiles) return;
  std::string names;
  for (const auto& n : list_profiles(config.profile_dir)) names += (names.empty() ? "" : ", ") + n;
  throw PlanError("--ddp-profile=" + quoted(*options.profile_file) +
                  ": this site allows only its own profiles, by name (plugstack.conf "
                  "user_profiles=no). Available: " + (names.empty() ? "none" : names));
}

ProfileChoice choose_profile(const UserOptions& options, const PlugstackConfig& config,
                             const std::optional<std::string>& cluster_name,
                             const std::string& hostname, const ProfileFileReader& read_user_file) {
  if (options.profile_file) {
    check_user_profile_allowed(options, config);
    return {read_user_file(*options.profile_file), "--ddp-profile=" + *options.profile_file};
  }
  return select_profile(config.profile_dir, options.profile, config.default_profile, cluster_name,
                        hostname);
}

}  // namespace ddp::plan
