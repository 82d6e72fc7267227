// A rank's TORCHELASTIC_ERROR_FILE, as torch's @record writes it (torch/distributed/elastic/
// multiprocessing/errors/error_handler.py, record_exception, 1.13 to 2.x):
//   {"message": {"message": "ValueError: bad batch",
//                "extraInfo": {"py_callstack": "Traceback ...", "timestamp": "1700000000"}}}
// and what the failure watch takes from it: the exception, the innermost frame of its traceback,
// and when it was written (the file's time, in nanoseconds: torch's own timestamp has seconds).
// libddp writes the same shape for C++ programs (runtime/src/error_file.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fcntl.h>

namespace ddp::watch {

struct ErrorRecord {
  std::string error;     // "ValueError: bad batch"
  std::string where;     // "File \"/work/train.py\", line 57, in step"; "" when unknown
  std::int64_t at_ns = 0;  // when it was written; 0 when unknown
};

// nullopt for text that is not such a file.
std::optional<ErrorRecord> parse_error_file(std::string_view text);

// Reads PATH (relative: to DIR_FD) as the job's user, without following a link: a regular file
// of at most 1 MiB, never a FIFO or device that would block; nullopt when there is none (the
// program has no @record) or it is not readable.
std::optional<ErrorRecord> read_error_file(const std::string& path, int dir_fd = AT_FDCWD);

// This node's error directory of the step (the plugin makes it as the first task starts; see
// plugin/spank/watch_launch.cpp), opened once it is there: every directory above it walked
// without following a link (contract/trusted_dir.hpp), itself a directory (O_DIRECTORY,
// O_NOFOLLOW) of this user's, mode 0700. Its files are then read and removed through the
// descriptor, so a path swapped under it by another user changes nothing.
class ErrorDir {
 public:
  explicit ErrorDir(std::string path) : path_(std::move(path)) {}
  ~ErrorDir();
  ErrorDir(const ErrorDir&) = delete;
  ErrorDir& operator=(const ErrorDir&) = delete;

  // The rank's record; nullopt when it has none or the directory is not this user's own.
  std::optional<ErrorRecord> read(unsigned rank);
  // Removes the ranks' files and the directory (when it is empty then).
  void remove(const std::vector<unsigned>& ranks);
  // Why the directory was refused; "" when it was not (yet).
  const std::string& problem() const { return problem_; }

 private:
  bool open();
  std::string path_;
  int parent_ = -1;
  int fd_ = -1;
  std::string problem_;
};

}  // namespace ddp::watch
