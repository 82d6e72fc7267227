// The failure watch in the plan: whether this step has one (on unless --ddp-watch=off or the
// profile's watch.enabled: false), its time-out, where the ranks' error files go, and the
// command line of this node's ddp-watch, which local task 0 starts (plugin/spank/watch_launch.cpp;
// the watch itself is watch/).
#pragma once

#include <optional>
#include <string>

#include "options.hpp"
#include "profile.hpp"
#include "step_facts.hpp"
#include "watch_args.hpp"

namespace ddp::plan {

struct StepPlan;

struct WatchPlan {
  unsigned timeout = watch::kDefaultTimeout;  // seconds
  unsigned hung_timeout = watch::default_hung_timeout(watch::kDefaultTimeout);  // state D
  std::string reason;     // "default", "--ddp-watch=30", "profile vega (watch.timeout)"
  std::string error_dir;  // the ranks' error files; "" without srun's nonce
  unsigned retries = 0;   // --ddp-retries, else the profile's watch.retries, else 0
};

// --ddp-watch[=S] wins over the profile's watch:, which wins over the default (on, 45 s).
std::optional<WatchPlan> plan_watch(const UserOptions& options, const ResolvedProfile& profile,
                                    const StepFacts& facts);

// The watch's program: plugstack.conf's watch=, else where the package installs it.
std::string watch_program(const PlugstackConfig& config);

// What this node's watch is told.
watch::WatchArgs watch_args(const StepPlan& step, const WatchPlan& plan);

// srun makes a token per step and hands it to slurmstepd in the step's environment (never as such
// to the tasks): the key that the step's watches seal their datagrams with (the watch's alone), a
// nonce that makes the error file directory's name unguessable, so that no other user can make it
// first, and the secret every task gets as DDP_STORE_KEY (contract::kDdpStoreKey), which libddp
// seals the rendezvous store's values with. Two secrets, so that a program that prints its
// environment gives away its store, not the watch that would name its failure.
inline constexpr const char* kStepTokenVar = "SLURM_SPANK_DDP_WATCH";
struct StepToken {
  std::string key;        // watch::kKeyHexDigits lowercase hex digits
  std::string nonce;      // 16 lowercase hex digits
  std::string store_key;  // contract::kStoreKeyHexDigits lowercase hex digits
};
// From the kernel's random numbers; throws PlanError when there are none.
StepToken new_step_token();
std::string encode_step_token(const StepToken& token);
// nullopt for anything but "KEY.NONCE.STORE_KEY" of the right lengths and digits.
std::optional<StepToken> decode_step_token(const std::string& text);

}  // namespace ddp::plan
