// Directories written into by root (the node facts cache, in slurmd and slurmstepd) or by the job's
// user (the sampler's monitor.dir), opened so that nobody else can redirect those writes.
//
// The path is walked from "/" one component at a time with openat(O_NOFOLLOW), and each directory
// is checked with fstat on the descriptor it was opened as, so what is checked is what is used:
// no symbolic link anywhere, and every directory owned by root or by `owner` and writable by
// group or others only when it is sticky. A directory only its owner may write cannot have an
// entry renamed or replaced by anyone else; in a sticky one (/tmp, /scratch) others may add names
// but not rename or remove ours, so a directory we walk into next, owned by root or `owner` in
// turn, stays ours. Names others may add there (the file's own name first, a FIFO, a hard link to
// a file of root's) are each caller's to refuse when it opens the file: owner, type, link count.
// The caller then names everything through the descriptor (openat, renameat, unlinkat, fstatat):
// a component swapped after the walk changes nothing it does.
#pragma once

#include <sys/types.h>

#include <string>

namespace ddp::plan {

// An open directory, or why none was opened.
class TrustedDir {
 public:
  TrustedDir() = default;
  TrustedDir(const TrustedDir&) = delete;
  TrustedDir& operator=(const TrustedDir&) = delete;
  TrustedDir(TrustedDir&& other) noexcept;
  TrustedDir& operator=(TrustedDir&& other) noexcept;
  ~TrustedDir();

  int fd() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }
  // One line: the directory at fault, its owner and mode where it has them, and the fix.
  const std::string& problem() const { return problem_; }
  // The walk found the directory itself missing (nothing else wrong), and did not make it.
  bool missing() const { return missing_; }

 private:
  friend TrustedDir open_trusted_dir(const std::string& path, uid_t owner, bool make_missing);
  int fd_ = -1;
  std::string problem_;
  bool missing_ = false;
};

// Opens the absolute `path` as described above; missing directories are made (mode 0755, less the
// umask) when make_missing says so, else the walk stops with missing() set. Never throws.
TrustedDir open_trusted_dir(const std::string& path, uid_t owner, bool make_missing);

}  // namespace ddp::plan
