// Rank-aware logging. By default one copy of each progress line per job (rank 0's), every rank's
// on request, and every error from every rank: the error on rank 5 is the one that explains why
// rank 0 hangs.
#pragma once

#include <spdlog/common.h>
#include <spdlog/logger.h>

#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "ddp/context.hpp"

#ifdef SPDLOG_USE_STD_FORMAT
#include <format>
#endif

namespace ddp {

enum class LogLevel { Info, Warn, Error };

// "[rank 3/8] msg", "[rank 3/8] warning: msg", "[rank 3/8] error: msg". Each line of a
// multi-line message gets the prefix, so grepping a job log for one rank finds all of its lines.
std::string format_log_line(const Context& ctx, LogLevel level, std::string_view message);

// DDP_LOG_ALL_RANKS: 1/true/yes/on, or 0/false/no/off (unset or empty: off). Throws ddp::Error
// naming the variable for anything else, rather than guess what a typo meant.
bool log_all_ranks_from_env(const EnvLookup& env);

class Logger {
 public:
  // Info and warnings from rank 0 only, unless `all_ranks` or DDP_LOG_ALL_RANKS=1. Info goes to
  // stdout, warnings and errors to stderr, each line flushed: Slurm writes them to files, and a
  // buffered last line is lost when a rank is killed.
  explicit Logger(const Context& ctx, bool all_ranks = false);
  // The same rank rules (DDP_LOG_ALL_RANKS not read), every line to `sink` only: for tests, or
  // a program that wants its own file.
  Logger(const Context& ctx, bool all_ranks, spdlog::sink_ptr sink);

  // Whether a line at `level` is written by this rank.
  bool prints(LogLevel level) const;

  void info(const std::string& message) const { write(LogLevel::Info, message); }
  void warn(const std::string& message) const { write(LogLevel::Warn, message); }
  void error(const std::string& message) const { write(LogLevel::Error, message); }

  // fmt-style: log.info("epoch {} loss {:.4f}", epoch, loss). Not formatted when not printed.
  template <typename... Args>
  void info(spdlog::format_string_t<Args...> format, Args&&... args) const {
    if (prints(LogLevel::Info)) info(render(format, std::forward<Args>(args)...));
  }
  template <typename... Args>
  void warn(spdlog::format_string_t<Args...> format, Args&&... args) const {
    if (prints(LogLevel::Warn)) warn(render(format, std::forward<Args>(args)...));
  }
  template <typename... Args>
  void error(spdlog::format_string_t<Args...> format, Args&&... args) const {
    error(render(format, std::forward<Args>(args)...));
  }

  // The spdlog logger underneath, to add a sink (a file) or flush before exit. Lines reach it
  // already prefixed: give a new sink the pattern "%v".
  const std::shared_ptr<spdlog::logger>& spdlog_logger() const { return logger_; }

 private:
  template <typename... Args>
  static std::string render(spdlog::format_string_t<Args...> format, Args&&... args) {
#ifdef SPDLOG_USE_STD_FORMAT
    return std::format(format, std::forward<Args>(args)...);
#else
    return fmt::format(format, std::forward<Args>(args)...);
#endif
  }

  void write(LogLevel level, const std::string& message) const;

  Context ctx_;
  bool all_ranks_;
  std::shared_ptr<spdlog::logger> logger_;
};

}  // namespace ddp
