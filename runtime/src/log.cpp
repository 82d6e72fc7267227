#include "ddp/log.hpp"

#include <cstdio>
#include <mutex>
#include <utility>

#include "ddp/error.hpp"
#include "env_reader.hpp"
#include "error_file.hpp"
#include "parse.hpp"

namespace ddp {
namespace {

constexpr const char* kAllRanks = "DDP_LOG_ALL_RANKS";

// Info to stdout, warnings and errors to stderr, flushed per message: the job's output file must
// hold a rank's last words even when the rank is killed right after them.
void write_std_streams(LogLevel level, const std::string& lines) {
  std::FILE* out = level == LogLevel::Info ? stdout : stderr;
  std::string text = lines;
  text += '\n';
  std::fwrite(text.data(), 1, text.size(), out);
  std::fflush(out);
}

const char* level_tag(LogLevel level) {
  switch (level) {
    case LogLevel::Info: return "";
    case LogLevel::Warn: return "warning: ";
    case LogLevel::Error: return "error: ";
  }
  return "";
}

}  // namespace

std::string format_log_line(const Context& ctx, LogLevel level, std::string_view message) {
  const std::string prefix = "[rank " + std::to_string(ctx.rank) + "/" +
                             std::to_string(ctx.world_size) + "] " + level_tag(level);
  if (!message.empty() && message.back() == '\n') message.remove_suffix(1);
  std::string out;
  std::size_t start = 0;
  while (true) {
    const std::size_t end = message.find('\n', start);
    out += prefix;
    out += message.substr(start, end == std::string_view::npos ? end : end - start);
    if (end == std::string_view::npos) break;
    out += '\n';
    start = end + 1;
  }
  return out;
}

bool log_all_ranks_from_env(const EnvLookup& env) {
  const auto value = env(kAllRanks);
  if (!value || value->empty()) return false;
  if (const auto on = detail::yes_no(*value)) return *on;
  throw Error(std::string(kAllRanks) + "=" + plan::quoted(*value) +
              " is not a yes/no value; use 1 (every rank logs) or 0 (rank 0 only), or unset it.");
}

struct Logger::State {
  Context ctx;
  bool all_ranks;
  LogSink sink;
  std::mutex lock;
};

Logger::Logger(const Context& ctx, bool all_ranks)
    : Logger(ctx, all_ranks || log_all_ranks_from_env(process_environment()), write_std_streams) {}

Logger::Logger(const Context& ctx, bool all_ranks, LogSink sink) {
  if (!sink) throw Error("Logger: the sink is empty; pass a function that writes the lines");
  state_ = std::make_shared<State>();
  state_->ctx = ctx;
  state_->all_ranks = all_ranks;
  state_->sink = std::move(sink);
}

bool Logger::prints(LogLevel level) const {
  return level == LogLevel::Error || state_->all_ranks || state_->ctx.is_main();
}

void Logger::write(LogLevel level, const std::string& message) const {
  // The program's first error is its word for the failure watch (error_file.hpp).
  if (level == LogLevel::Error) detail::record_error(message, process_environment());
  if (!prints(level)) return;
  const std::string lines = format_log_line(state_->ctx, level, message);
  const std::lock_guard<std::mutex> hold(state_->lock);
  state_->sink(level, lines);
}

}  // namespace ddp
