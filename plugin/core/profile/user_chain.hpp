// A user's own profile file (--ddp-profile=/path, where plugstack.conf says user_profiles=yes)
// is read by srun, with the user's own rights, and travels with the step in one environment
// variable: slurmstepd, root on every node, never opens a file a user names (a FIFO, a file on a
// hung file system, a 20,000-deep `extends` chain), and every node plans from the same text,
// even where the file is not there (a login node's /tmp).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "profile.hpp"

namespace ddp::plan {

// Set by srun in the step's environment, read and removed by slurmstepd.
inline constexpr const char* kUserProfileVar = "SLURM_SPANK_DDP_USER_PROFILE";

// One environment string holds at most 128 KiB on Linux; a profile needs a few kilobytes.
inline constexpr std::size_t kMaxUserChainBytes = 96 * 1024;

// srun: the file at `path` and the ones it extends, checked as slurmstepd will check them, as one
// JSON text: {"files": [{"path": P, "text": T}, ...]}, the named file first. Throws PlanError.
std::string pack_user_chain(const std::string& path);

// slurmstepd: the profile from what srun sent for `path` (the --ddp-profile value). What arrives
// is the user's word like the file itself, so it is held to the same limits. Throws PlanError.
Profile unpack_user_chain(const std::string& path, std::string_view packed);

}  // namespace ddp::plan
