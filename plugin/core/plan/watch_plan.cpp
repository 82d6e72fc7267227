#include "watch_plan.hpp"

#include <sys/random.h>

#include <cerrno>
#include <cstring>

#include "error.hpp"
#include "planner.hpp"
#include "control.hpp"

namespace ddp::plan {

std::optional<WatchPlan> plan_watch(const UserOptions& options, const ResolvedProfile& profile,
                                    const StepFacts& facts) {
  const WatchDefaults& site = profile.watch;
  WatchPlan plan;
  if (options.watch) {
    if (!options.watch->on) return std::nullopt;
    plan.reason = "--" + std::string(kOptWatch);
    if (options.watch->timeout) plan.reason += "=" + std::to_string(*options.watch->timeout);
  } else if (site.enabled && !*site.enabled) {
    return std::nullopt;
  } else {
    plan.reason = site.timeout ? "profile " + profile.name + " (watch.timeout)" : "default";
  }
  plan.timeout = options.watch && options.watch->timeout
                     ? *options.watch->timeout
                     : site.timeout.value_or(watch::kDefaultTimeout);
  plan.hung_timeout = options.watch && options.watch->hung_timeout
                          ? *options.watch->hung_timeout
                          : watch::default_hung_timeout(plan.timeout);
  plan.retries = options.retries.value_or(site.retries.value_or(0));
  // Private to the step: the name holds srun's nonce, so nobody else can make it first; and to
  // the node, for a TMPDIR shared between nodes (its watch removes it at the end).
  if (facts.watch_nonce)
    plan.error_dir = facts.tmpdir + "/ddp-" + std::to_string(facts.job_id) + "." +
                     std::to_string(facts.step_id) + "-" + *facts.watch_nonce + "-node" +
                     std::to_string(facts.node_id);
  return plan;
}

std::string watch_program(const PlugstackConfig& config) {
  return config.watch_program.value_or(DDP_WATCH_PROGRAM);
}

watch::WatchArgs watch_args(const StepPlan& step, const WatchPlan& plan) {
  const StepFacts& f = step.facts;
  watch::WatchArgs a;
  a.job = f.job_id;
  a.step = f.step_id;
  a.node = f.node_id;
  a.nodes = f.nodes;
  a.host = f.hostname;
  a.world = f.total_tasks;
  a.head = step.master_addr;
  a.port = step.port.port;
  a.timeout = plan.timeout;
  a.hung_timeout = plan.hung_timeout;
  a.error_dir = plan.error_dir;
  a.retries = plan.retries;
  a.restarts = f.restart_count;
  a.control_fd = monitor::kControlFd;
  a.reply_fd = monitor::kReplyFd;
  return a;
}

namespace {

constexpr std::size_t kNonceHexDigits = 16;

std::string hex(const unsigned char* bytes, std::size_t n) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < n; ++i) {
    out += digits[bytes[i] >> 4];
    out += digits[bytes[i] & 15];
  }
  return out;
}

}  // namespace

WatchToken new_watch_token() {
  unsigned char bytes[watch::kKeyHexDigits / 2 + kNonceHexDigits / 2];
  std::size_t got = 0;
  while (got < sizeof bytes) {
    const ssize_t n = ::getrandom(bytes + got, sizeof bytes - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw PlanError(std::string("getrandom: ") + std::strerror(errno));
    got += static_cast<std::size_t>(n);
  }
  return {hex(bytes, watch::kKeyHexDigits / 2), hex(bytes + watch::kKeyHexDigits / 2, kNonceHexDigits / 2)};
}

std::string encode_watch_token(const WatchToken& token) { return token.key + "." + token.nonce; }

std::optional<WatchToken> decode_watch_token(const std::string& text) {
  const auto dot = text.find('.');
  if (dot == std::string::npos) return std::nullopt;
  WatchToken t{text.substr(0, dot), text.substr(dot + 1)};
  // The nonce is read as a half-length key: the same digits.
  if (!watch::valid_key(t.key) || t.nonce.size() != kNonceHexDigits ||
      !watch::valid_key(t.nonce + t.nonce))
    return std::nullopt;
  return t;
}

}  // namespace ddp::plan
