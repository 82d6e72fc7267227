// Reading a user's own profile file inside slurmstepd, which runs as root: with the user's file
// system identity, so a user can name only files the user could read anyway.
#pragma once

#include <sys/types.h>

#include <string>

#include "profile.hpp"

namespace ddp::spank {

plan::Profile read_profile_as_user(uid_t uid, gid_t gid, const std::string& path);

}  // namespace ddp::spank
