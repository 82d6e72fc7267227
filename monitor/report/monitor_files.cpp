#include "monitor_files.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>

#include "error.hpp"
#include "parse.hpp"
#include "sampler_args.hpp"
#include "summary.hpp"

namespace ddp::monitor {
namespace {

namespace fs = std::filesystem;
using plan::PlanError;

// What one read() asks for; a line may span several.
constexpr std::size_t kChunk = 64 * 1024;

using Folders = std::map<std::string, std::shared_ptr<const Folder>>;

bool has_shape(const std::string& name, const std::string& prefix) {
  const std::string suffix = kFileSuffix;
  return name.size() > prefix.size() + suffix.size() && name.compare(0, prefix.size(), prefix) == 0 &&
         name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::vector<std::string> names_in(const Folder& folder) {
  // The listing reads the folder that was opened, not what its path names by now.
  const int fd = ::fcntl(folder.fd(), F_DUPFD_CLOEXEC, 0);
  DIR* dir = fd < 0 ? nullptr : ::fdopendir(fd);
  if (!dir) {
    if (fd >= 0) ::close(fd);
    return {};
  }
  ::rewinddir(dir);  // the duplicate shares the original's offset
  std::vector<std::string> names;
  while (const dirent* e = ::readdir(dir)) names.emplace_back(e->d_name);
  ::closedir(dir);
  return names;
}

// A link or a FIFO of the shape is listed, so that opening it says why it is refused rather
// than the file going unread without a word; only a directory is passed over.
bool not_a_directory(const Folder& folder, const std::string& name) {
  struct stat st {};
  return ::fstatat(folder.fd(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
         !S_ISDIR(st.st_mode);
}

std::vector<MonitorFile> files_in(const std::shared_ptr<const Folder>& folder,
                                  const std::string& prefix) {
  std::vector<MonitorFile> found;
  for (std::string& name : names_in(*folder))
    if (has_shape(name, prefix) && not_a_directory(*folder, name)) {
      std::string path = (fs::path(folder->path()) / name).string();
      found.push_back({folder, std::move(name), std::move(path)});
    }
  std::sort(found.begin(), found.end(),
            [](const MonitorFile& a, const MonitorFile& b) { return a.path < b.path; });
  return found;
}

// Files named one by one share their directory's descriptor: a thousand of them in one
// directory must not take a thousand descriptors.
MonitorFile file_in(const std::string& path, Folders& folders) {
  const fs::path p(path);
  std::string dir = p.parent_path().string();
  if (dir.empty()) dir = ".";
  auto& folder = folders[dir];
  if (!folder) folder = std::make_shared<const Folder>(dir);
  return {folder, p.filename().string(), path};
}

std::string kind_of(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  return "not a regular file";
}

}  // namespace

Fd::~Fd() {
  if (fd_ >= 0) ::close(fd_);
}

Fd& Fd::operator=(Fd&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.release();
  }
  return *this;
}

int Fd::release() {
  const int fd = fd_;
  fd_ = -1;
  return fd;
}

Folder::Folder(std::string path) : path_(std::move(path)) {
  // The folder itself is followed where a link names it: the admin named it, or Slurm did.
  fd_ = Fd(::open(path_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (fd_.get() < 0)
    throw PlanError(path_ + ": cannot be read as a directory: " + std::strerror(errno) +
                    ". Fix: check the path and its permissions");
}

MonitorFile monitor_file(const std::string& path) {
  Folders folders;
  return file_in(path, folders);
}

std::vector<MonitorFile> monitor_files(const std::vector<std::string>& paths) {
  std::vector<MonitorFile> out;
  Folders folders;
  for (const std::string& p : paths) {
    std::error_code ec;
    const auto status = fs::status(p, ec);
    if (ec || !fs::exists(status))
      throw PlanError(plan::quoted(p) + " does not exist. Fix: name ddp-monitor-*" + kFileSuffix +
                      " files, the directory that holds them, or a job as JOBID[.STEP]");
    if (!fs::is_directory(status)) {
      out.push_back(file_in(p, folders));
      continue;
    }
    const auto found = files_in(std::make_shared<const Folder>(p), kFilePrefix);
    if (found.empty())
      throw PlanError(plan::quoted(p) + " holds no " + kFilePrefix + "*" + kFileSuffix +
                      " file. Fix: name the directory --ddp-monitor wrote into (the job's "
                      "working directory, or the profile's monitor.dir), or the job as JOBID");
    out.insert(out.end(), found.begin(), found.end());
  }
  return out;
}

std::vector<MonitorFile> job_files_in(const std::string& dir, std::uint32_t job,
                                      std::optional<std::uint32_t> step) {
  std::string prefix = kFilePrefix + std::to_string(job) + ".";
  if (step) prefix += std::to_string(*step) + "-";
  try {
    return files_in(std::make_shared<const Folder>(dir), prefix);
  } catch (const PlanError&) {
    return {};  // one of the places a job's files may be; the caller says where it looked
  }
}

Fd open_monitor_file(const MonitorFile& file) {
  Fd fd(::openat(file.folder->fd(), file.name.c_str(),
                 O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
  if (fd.get() < 0 && errno == ELOOP)
    throw PlanError(file.path + ": is a symbolic link, and ddp-report follows none in the folders "
                    "it reads (another user's link could point at any file). Fix: name the file it "
                    "points to, if that is a ddp-monitor file");
  if (fd.get() < 0)
    throw PlanError(file.path + ": cannot be read: " + std::strerror(errno) +
                    ". Fix: check the path and its permissions");
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode))
    throw PlanError(file.path + ": is " + kind_of(st.st_mode) + ", and ddp-monitor writes only "
                    "regular files. Fix: name the files ddp-monitor wrote, or remove this one");
  return fd;
}

LineReader::LineReader(const Fd& fd, std::string path, ReadBounds bounds)
    : fd_(fd.get()), path_(std::move(path)), bounds_(bounds) {}

bool LineReader::fill() {
  buf_.clear();
  pos_ = 0;
  if (eof_) return false;
  if (read_ >= bounds_.file) {
    char more;
    stopped_early_ = ::read(fd_, &more, 1) > 0;
    eof_ = true;
    return false;
  }
  buf_.resize(static_cast<std::size_t>(std::min<std::uint64_t>(kChunk, bounds_.file - read_)));
  ssize_t n;
  do n = ::read(fd_, buf_.data(), buf_.size());
  while (n < 0 && errno == EINTR);
  if (n < 0)
    throw PlanError(path_ + ": cannot be read: " + std::strerror(errno) +
                    ". Fix: check the file and the file system it is on");
  buf_.resize(static_cast<std::size_t>(n));
  read_ += static_cast<std::uint64_t>(n);
  eof_ = n == 0;
  return n > 0;
}

void LineReader::skip_line() {
  if (skipped_++ == 0) first_skipped_ = line_no_;
}

bool LineReader::next(std::string& line) {
  line.clear();
  bool started = false, too_long = false;
  for (;;) {
    if (pos_ == buf_.size() && !fill()) break;
    started = true;
    const std::size_t nl = buf_.find('\n', pos_);
    const std::size_t end = nl == std::string::npos ? buf_.size() : nl;
    too_long = too_long || line.size() + (end - pos_) > bounds_.line;
    if (too_long)
      line.clear();
    else
      line.append(buf_, pos_, end - pos_);
    pos_ = end;
    if (nl == std::string::npos) continue;
    ++pos_;
    ++line_no_;
    if (!too_long) {
      complete_ = true;
      return true;
    }
    skip_line();
    started = too_long = false;
  }
  // What is left is a last line without its newline; one the size bound cut is not given.
  if (!started || stopped_early_) return false;
  ++line_no_;
  if (too_long) {
    skip_line();
    return false;
  }
  complete_ = false;
  return true;
}

std::vector<std::string> LineReader::warnings() const {
  std::vector<std::string> out;
  if (skipped_)
    out.push_back(path_ + ": " +
                  (skipped_ == 1 ? "line " + std::to_string(first_skipped_) + " is"
                                 : std::to_string(skipped_) + " lines (the first line " +
                                       std::to_string(first_skipped_) + ") are") +
                  " longer than " + format_bytes(static_cast<double>(bounds_.line)) +
                  ", which no ddp-monitor line is, and " + (skipped_ == 1 ? "was" : "were") +
                  " skipped. Fix: give ddp-report the files ddp-monitor wrote, unchanged");
  if (stopped_early_)
    out.push_back(path_ + ": only its first " + format_bytes(static_cast<double>(bounds_.file)) +
                  " were read, more than ddp-monitor writes in weeks; what the report says of "
                  "this node ends there. Fix: give ddp-report the files ddp-monitor wrote, "
                  "unchanged");
  return out;
}

}  // namespace ddp::monitor
