#include "trusted_dir.hpp"

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string_view>
#include <vector>

#include "parse.hpp"

namespace ddp::plan {
namespace {

std::string user_text(uid_t uid) {
  std::vector<char> buf(16384);
  passwd pw{};
  passwd* found = nullptr;
  const std::string id = "uid " + std::to_string(uid);
  if (getpwuid_r(uid, &pw, buf.data(), buf.size(), &found) == 0 && found)
    return std::string(pw.pw_name) + ", " + id;
  return id;
}

std::string mode_text(mode_t mode) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(mode & 07777));
  return buf;
}

std::string trusted_owners(uid_t owner) {
  return owner == 0 ? std::string("root") : "root or " + user_text(owner);
}

// Why the directory open as `fd` may not be walked through or used, "" when it may.
std::string refusal(int fd, const std::string& path, uid_t owner) {
  struct stat st{};
  if (fstat(fd, &st) != 0) return "cannot examine " + path + ": " + std::strerror(errno);
  const std::string what =
      path + " (mode " + mode_text(st.st_mode) + ", owner " + user_text(st.st_uid) + ")";
  if (st.st_uid != 0 && st.st_uid != owner)
    return what + " belongs to another user, who could swap what lies under it; only " +
           trusted_owners(owner) + " may own it: remove it (or ask its owner or the admin to), "
           "or choose another directory";
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX))
    return what + " is writable by others, who could swap what lies under it: chmod go-w " +
           path + " (or +t to share it, as /tmp is), or choose another directory";
  return "";
}

// Why `name` in the directory `dir` could not be opened as a directory.
std::string open_failure(int dir, const std::string& name, const std::string& path, int err) {
  struct stat st{};
  if ((err == ELOOP || err == ENOTDIR) &&
      fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
    if (S_ISLNK(st.st_mode)) {
      std::vector<char> target(4096);
      const ssize_t n = readlinkat(dir, name.c_str(), target.data(), target.size() - 1);
      return path + " is a symbolic link" +
             (n > 0 ? " to " + quoted(std::string_view(target.data(), static_cast<std::size_t>(n)))
                    : std::string()) +
             " (owner " + user_text(st.st_uid) +
             "), which is never followed: name the directory by its real path, or remove the link";
    }
    return path + " is not a directory";
  }
  return "cannot open " + path + ": " + std::strerror(err);
}

}  // namespace

TrustedDir::TrustedDir(TrustedDir&& other) noexcept
    : fd_(other.fd_), problem_(std::move(other.problem_)), missing_(other.missing_) {
  other.fd_ = -1;
}

TrustedDir& TrustedDir::operator=(TrustedDir&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    problem_ = std::move(other.problem_);
    missing_ = other.missing_;
    other.fd_ = -1;
  }
  return *this;
}

TrustedDir::~TrustedDir() {
  if (fd_ >= 0) ::close(fd_);
}

TrustedDir open_trusted_dir(const std::string& path, uid_t owner, bool make_missing) {
  TrustedDir out;
  if (path.empty() || path.front() != '/') {
    out.problem_ = quoted(path) + " is not an absolute path";
    return out;
  }
  int fd = ::open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    out.problem_ = std::string("cannot open /: ") + std::strerror(errno);
    return out;
  }
  std::string walked = "/";
  std::string problem = refusal(fd, walked, owner);
  std::size_t start = 1;
  while (problem.empty() && start < path.size()) {
    const std::size_t slash = std::min(path.find('/', start), path.size());
    const std::string name = path.substr(start, slash - start);
    start = slash + 1;
    if (name.empty() || name == ".") continue;
    walked += (walked.size() > 1 ? "/" : "") + name;
    if (name == "..") {
      problem = quoted(path) + " names '..'; write the directory without it";
      break;
    }
    constexpr int kFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
    int next = ::openat(fd, name.c_str(), kFlags);
    if (next < 0 && errno == ENOENT && make_missing) {
      if (::mkdirat(fd, name.c_str(), 0755) != 0 && errno != EEXIST) {
        problem = "cannot create " + walked + ": " + std::strerror(errno);
        break;
      }
      next = ::openat(fd, name.c_str(), kFlags);
    }
    if (next < 0) {
      const int err = errno;
      out.missing_ = err == ENOENT && start >= path.size();
      problem = err == ENOENT ? walked + " does not exist" : open_failure(fd, name, walked, err);
      break;
    }
    ::close(fd);
    fd = next;
    problem = refusal(fd, walked, owner);
  }
  if (!problem.empty()) {
    ::close(fd);
    out.problem_ = problem;
    return out;
  }
  out.fd_ = fd;
  return out;
}

}  // namespace ddp::plan
