#include "user_file_reader.hpp"

#include <sys/fsuid.h>

#include "error.hpp"

namespace ddp::spank {
namespace {

// setfsuid/setfsgid change only file-access identity, only for this thread, and are restored on
// every way out, exceptions included.
class FilesystemIdentity {
 public:
  FilesystemIdentity(uid_t uid, gid_t gid)
      : old_gid_(static_cast<gid_t>(setfsgid(gid))), old_uid_(static_cast<uid_t>(setfsuid(uid))) {
    if (static_cast<uid_t>(setfsuid(uid)) != uid || static_cast<gid_t>(setfsgid(gid)) != gid) {
      restore();
      throw plan::PlanError("cannot take the user's identity to read the profile file");
    }
  }
  ~FilesystemIdentity() { restore(); }
  FilesystemIdentity(const FilesystemIdentity&) = delete;
  FilesystemIdentity& operator=(const FilesystemIdentity&) = delete;

 private:
  void restore() {
    setfsuid(old_uid_);
    setfsgid(old_gid_);
  }
  gid_t old_gid_;
  uid_t old_uid_;
};

}  // namespace

plan::Profile read_profile_as_user(uid_t uid, gid_t gid, const std::string& path) {
  FilesystemIdentity as_user(uid, gid);
  return plan::load_profile_file(path);
}

}  // namespace ddp::spank
