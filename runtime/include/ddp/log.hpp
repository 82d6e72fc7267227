// Rank-aware logging. By default one copy of each progress line per job (rank 0's), every rank's
// on request, and every error from every rank: the error on rank 5 is the one that explains why
// rank 0 hangs.
//
// Nothing of a logging or formatting library is in this header: a program's LibTorch (a pip
// wheel's include directory carries its own fmt) must never meet another fmt through ours.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "ddp/context.hpp"

namespace ddp {

enum class LogLevel { Info, Warn, Error };

// "[rank 3/8] msg", "[rank 3/8] warning: msg", "[rank 3/8] error: msg". Each line of a
// multi-line message gets the prefix, so grepping a job log for one rank finds all of its lines.
std::string format_log_line(const Context& ctx, LogLevel level, std::string_view message);

// DDP_LOG_ALL_RANKS: 1/true/yes/on, or 0/false/no/off (unset or empty: off). Throws ddp::Error
// naming the variable for anything else, rather than guess what a typo meant.
bool log_all_ranks_from_env(const EnvLookup& env);

// Where a Logger's lines go: one call per message, `lines` already prefixed (one or more lines,
// without the final newline). Calls never overlap: the Logger serialises them.
using LogSink = std::function<void(LogLevel level, const std::string& lines)>;

class Logger {
 public:
  // Info and warnings from rank 0 only, unless `all_ranks` or DDP_LOG_ALL_RANKS=1. Info goes to
  // stdout, warnings and errors to stderr, each message flushed: Slurm writes them to files, and
  // a buffered last line is lost when a rank is killed.
  explicit Logger(const Context& ctx, bool all_ranks = false);
  // The same rank rules (DDP_LOG_ALL_RANKS not read), every message to `sink` only: for tests,
  // a program that wants its own file, or its own logging library.
  Logger(const Context& ctx, bool all_ranks, LogSink sink);

  // Whether a line at `level` is written by this rank.
  bool prints(LogLevel level) const;

  void info(const std::string& message) const { write(LogLevel::Info, message); }
  void warn(const std::string& message) const { write(LogLevel::Warn, message); }
  void error(const std::string& message) const { write(LogLevel::Error, message); }

 private:
  void write(LogLevel level, const std::string& message) const;

  struct State;
  // Shared by copies, as one log: the sink and the lock that keeps its calls apart.
  std::shared_ptr<State> state_;
};

}  // namespace ddp
