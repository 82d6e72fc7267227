#include "watch_plan.hpp"

#include <sys/random.h>

#include <cerrno>
#include <cstring>

#include "error.hpp"
#include "planner.hpp"
#include "control.hpp"
#include "ddp/env_contract.hpp"

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
  a.ports = step.port_range;
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

// `n` random bytes as lowercase hex digits.
std::string random_hex(std::size_t n) {
  unsigned char bytes[64];
  if (n > sizeof bytes) throw PlanError("random_hex: too many bytes");
  std::size_t got = 0;
  while (got < n) {
    const ssize_t r = ::getrandom(bytes + got, n - got, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) throw PlanError(std::string("getrandom: ") + std::strerror(errno));
    got += static_cast<std::size_t>(r);
  }
  return hex(bytes, n);
}

bool lowercase_hex(const std::string& s, std::size_t digits) {
  return s.size() == digits && s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

}  // namespace

StepToken new_step_token() {
  return {random_hex(watch::kKeyHexDigits / 2), random_hex(kNonceHexDigits / 2),
          random_hex(contract::kStoreKeyHexDigits / 2)};
}

std::string encode_step_token(const StepToken& token) {
  return token.key + "." + token.nonce + "." + token.store_key;
}

std::optional<StepToken> decode_step_token(const std::string& text) {
  const auto first = text.find('.');
  const auto second = first == std::string::npos ? first : text.find('.', first + 1);
  if (second == std::string::npos) return std::nullopt;
  StepToken t{text.substr(0, first), text.substr(first + 1, second - first - 1), text.substr(second + 1)};
  if (!lowercase_hex(t.key, watch::kKeyHexDigits) || !lowercase_hex(t.nonce, kNonceHexDigits) ||
      !lowercase_hex(t.store_key, contract::kStoreKeyHexDigits))
    return std::nullopt;
  return t;
}

}  // namespace ddp::plan
