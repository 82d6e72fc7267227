#include "ddp/log.hpp"

#include <spdlog/details/log_msg.h>
#include <spdlog/sinks/base_sink.h>

#include <cstdio>
#include <mutex>

#include "ddp/error.hpp"
#include "parse.hpp"

namespace ddp {
namespace {

constexpr const char* kAllRanks = "DDP_LOG_ALL_RANKS";

// Info to stdout, warnings and errors to stderr, flushed per line: the job's output file must
// hold a rank's last words even when the rank is killed right after them.
class StdStreamsSink final : public spdlog::sinks::base_sink<std::mutex> {
 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    spdlog::memory_buf_t line;
    formatter_->format(msg, line);
    std::FILE* out = msg.level >= spdlog::level::warn ? stderr : stdout;
    std::fwrite(line.data(), 1, line.size(), out);
    std::fflush(out);
  }
  void flush_() override {
    std::fflush(stdout);
    std::fflush(stderr);
  }
};

spdlog::level::level_enum spdlog_level(LogLevel level) {
  switch (level) {
    case LogLevel::Info: return spdlog::level::info;
    case LogLevel::Warn: return spdlog::level::warn;
    case LogLevel::Error: return spdlog::level::err;
  }
  return spdlog::level::err;
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
  for (const char* yes : {"1", "true", "yes", "on"})
    if (*value == yes) return true;
  for (const char* no : {"0", "false", "no", "off"})
    if (*value == no) return false;
  throw Error(std::string(kAllRanks) + "=" + plan::quoted(*value) +
              " is not a yes/no value; use 1 (every rank logs) or 0 (rank 0 only), or unset it.");
}

Logger::Logger(const Context& ctx, bool all_ranks)
    : Logger(ctx, all_ranks || log_all_ranks_from_env(process_environment()),
             std::make_shared<StdStreamsSink>()) {}

Logger::Logger(const Context& ctx, bool all_ranks, spdlog::sink_ptr sink)
    : ctx_(ctx), all_ranks_(all_ranks) {
  if (!sink) throw Error("Logger: the sink is null; pass a spdlog sink to write to");
  // Not registered with spdlog's global registry: two Loggers in one process must not clash.
  logger_ = std::make_shared<spdlog::logger>("ddp", std::move(sink));
  logger_->set_pattern("%v");  // the rank prefix is ours, added per line
  logger_->set_level(spdlog::level::trace);
  logger_->flush_on(spdlog::level::trace);
}

bool Logger::prints(LogLevel level) const {
  return level == LogLevel::Error || all_ranks_ || ctx_.is_main();
}

void Logger::write(LogLevel level, const std::string& message) const {
  if (!prints(level)) return;
  logger_->log(spdlog_level(level), "{}", format_log_line(ctx_, level, message));
}

}  // namespace ddp
