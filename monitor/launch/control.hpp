// The control channel between slurmstepd and a helper program of the step on its node (the
// --ddp-monitor sampler, the failure watch): pipes the plugin makes in slurmstepd before the
// tasks are forked (plugin/spank/helper_channel.hpp), one each way. Local task 0 starts the
// helper with the read end of the first as fd 3 and the write end of the second as fd 4;
// slurmstepd keeps the other ends. Pipes, not a socket: nothing can pass a descriptor through a
// pipe, so nothing the helper's user does can hand root a descriptor whose close would block it.
// One message per line:
//
//   slurmstepd -> helper    task LOCAL GLOBAL PID START   each task of the step on the node (START:
//                                                        its start in ticks after boot, proc(5))
//                           exit LOCAL GLOBAL STATUS WALL a task ended (the watch's): its wait
//                                                        status, and when (ns since the epoch)
//                           end (or end of file)          the step's tasks have ended: stop
//   helper     -> stepd     done                          it said what it had to; it exits
//
// and on a third pipe, which the helper never holds (it closes at exec):
//
//   launcher   -> stepd     helper PID START              written by the helper's process before
//                                                        it runs the program: with START, names
//                                                        that process for good
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ddp::monitor {

inline constexpr int kControlFd = 3;  // the helper's: slurmstepd -> helper
inline constexpr int kReplyFd = 4;    // the helper's: helper -> slurmstepd

struct ControlMessage {
  enum class Kind { Task, Exit, End, Helper, Done } kind = Kind::Done;
  long local = 0;          // Task, Exit
  long global = 0;         // Task, Exit
  long pid = 0;            // Task, Helper
  std::uint64_t start_time = 0;  // Task (0 when not given), Helper
  int status = 0;          // Exit
  std::int64_t wall_ns = 0;  // Exit
};

std::string task_message(unsigned local, unsigned global, long pid, std::uint64_t start_time);
std::string exit_message(unsigned local, unsigned global, int status, std::int64_t wall_ns);
inline constexpr const char* kDoneMessage = "done\n";
inline constexpr const char* kEndMessage = "end\n";

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
