// The control channel between slurmstepd and the sampler of a monitored step: a stream
// socketpair the plugin makes in slurmstepd before the tasks are forked. Local task 0 starts the
// sampler with its end as fd 3; slurmstepd keeps the other. One message per line:
//
//   slurmstepd -> sampler   task LOCAL GLOBAL PID     each task of the step on the node
//                           end of stream             the step's tasks have ended: stop
//   launcher   -> stepd     sampler PID               written before exec (async-signal-safe)
//   sampler    -> stepd     hello PID START_TIME      start time in ticks after boot (proc(5))
//                           done                      the summary is out; the sampler exits
//
// slurmstepd ends the stream with shutdown(SHUT_WR), which the sampler reads as end of file
// however many copies of its end exist; the sampler's `done` tells slurmstepd it may go on.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ddp::monitor {

inline constexpr int kControlFd = 3;

struct ControlMessage {
  enum class Kind { Task, Sampler, Hello, Done } kind = Kind::Done;
  long local = 0;          // Task
  long global = 0;         // Task
  long pid = 0;            // Task, Sampler, Hello
  std::uint64_t start_time = 0;  // Hello
};

std::string task_message(unsigned local, unsigned global, long pid);
std::string hello_message(long pid, std::uint64_t start_time);
inline constexpr const char* kDoneMessage = "done\n";

// nullopt for a line that is no message (ignored: a later version may add some).
std::optional<ControlMessage> parse_control(std::string_view line);

// Each side's whole say on the channel is a few lines; anything near these limits is a sampler
// gone wrong, or the user's code in it (the sampler runs the job's environment, LD_PRELOAD
// included), and slurmstepd, which reads it as root, must not follow it.
inline constexpr std::size_t kMaxControlLine = 4096;
inline constexpr std::size_t kMaxControlBytes = 64 * 1024;

// Splits what arrives in pieces into lines, holding at most kMaxControlLine bytes of a line not
// yet ended and taking at most `budget` bytes in all. Each byte is looked at once.
class LineBuffer {
 public:
  explicit LineBuffer(std::size_t budget = kMaxControlBytes) : budget_(budget) {}
  // False once the other side went past a limit; from then on nothing more is taken.
  bool feed(const char* data, std::size_t size);
  std::optional<std::string> next();
  bool overflowed() const { return overflowed_; }

 private:
  std::string pending_;
  std::size_t start_ = 0;    // of the first line not yet returned
  std::size_t scanned_ = 0;  // no newline in [start_, scanned_)
  std::size_t taken_ = 0;
  std::size_t budget_;
  bool overflowed_ = false;
};

}  // namespace ddp::monitor
