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

namespace ddp::watch {

struct ErrorRecord {
  std::string error;     // "ValueError: bad batch"
  std::string where;     // "File \"/work/train.py\", line 57, in step"; "" when unknown
  std::int64_t at_ns = 0;  // when it was written; 0 when unknown
};

// nullopt for text that is not such a file.
std::optional<ErrorRecord> parse_error_file(std::string_view text);

// Reads PATH as the job's user: a regular file of at most 1 MiB, never a FIFO or device that
// would block; nullopt when there is none (the program has no @record) or it is not readable.
std::optional<ErrorRecord> read_error_file(const std::string& path);

}  // namespace ddp::watch
