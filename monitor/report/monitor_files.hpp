// Which files ddp-report reads, named ddp-monitor-JOB.STEP-NODE.jsonl (sampler_args.hpp), given
// one by one or by their directory, and how it opens and reads them. The files and their folder
// may be another user's (an admin reports on users' jobs), who can make a name a link to a file
// only the admin may read, a FIFO that never answers, or a line or a file without end. So a
// folder is opened once and its files by name within it, never through a symbolic link and only
// when regular; a file is read in lines of bounded length, up to a bounded size.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ddp::monitor {

// A line of ddp-monitor is a few hundred bytes (record.hpp), its longest a note of NVML's: a
// longer line is not the sampler's, and is skipped unread.
inline constexpr std::size_t kMaxLineBytes = 64 * 1024;

// 8 GPUs sampled every 10 s write 11 MB a day, every second 112 MB (docs/users.md): 2 GiB is
// half a year of the one, three weeks of the other. Past it a file is not read.
inline constexpr std::uint64_t kMaxFileBytes = std::uint64_t{2} << 30;

struct ReadBounds {
  std::size_t line = kMaxLineBytes;
  std::uint64_t file = kMaxFileBytes;
};

// A file descriptor, closed when it goes.
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd();
  Fd(Fd&& other) noexcept : fd_(other.release()) {}
  Fd& operator=(Fd&& other) noexcept;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  int release();

 private:
  int fd_;
};

// A directory, opened once: its files are opened within it, so renaming it, or putting a link
// where it was, cannot send ddp-report elsewhere.
class Folder {
 public:
  // Throws ddp::plan::PlanError when `path` cannot be opened as a directory.
  explicit Folder(std::string path);
  int fd() const { return fd_.get(); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  Fd fd_;
};

struct MonitorFile {
  std::shared_ptr<const Folder> folder;
  std::string name;  // within the folder
  std::string path;  // as messages name it
};

// A file named by its path: its parent directory opened, the file not yet.
MonitorFile monitor_file(const std::string& path);

// The files named, with each directory replaced by its ddp-monitor-*.jsonl files (sorted). Throws
// ddp::plan::PlanError for a path that does not exist or a directory without such files.
std::vector<MonitorFile> monitor_files(const std::vector<std::string>& paths);

// The files of one job (and step) in `dir`, sorted; none when the directory cannot be read.
std::vector<MonitorFile> job_files_in(const std::string& dir, std::uint32_t job,
                                      std::optional<std::uint32_t> step);

// The file opened for reading, without following a link and without waiting (a FIFO would hold
// the report forever). Throws PlanError for a link, anything but a regular file, or no access.
Fd open_monitor_file(const MonitorFile& file);

// A file's lines, read in chunks: a line longer than bounds.line is skipped as it goes by,
// never held whole, and nothing past bounds.file bytes is read.
class LineReader {
 public:
  LineReader(const Fd& fd, std::string path, ReadBounds bounds = {});
  // The next line within the bound, without its newline; false at the end.
  bool next(std::string& line);
  std::size_t line_number() const { return line_no_; }          // of the last, skipped ones counted
  bool complete() const { return complete_; }                    // the last ended with a newline
  std::size_t skipped() const { return skipped_; }               // lines longer than bounds.line
  std::size_t first_skipped() const { return first_skipped_; }  // the first one's number
  bool stopped_early() const { return stopped_early_; }          // at bounds.file, with more left
  // What the report says of the file's reading: the lines skipped, and where it stopped.
  std::vector<std::string> warnings() const;

 private:
  bool fill();
  void skip_line();
  int fd_;
  std::string path_;
  ReadBounds bounds_;
  std::string buf_;
  std::size_t pos_ = 0;
  std::uint64_t read_ = 0;
  bool eof_ = false;
  std::size_t line_no_ = 0, skipped_ = 0, first_skipped_ = 0;
  bool complete_ = false, stopped_early_ = false;
};

}  // namespace ddp::monitor
