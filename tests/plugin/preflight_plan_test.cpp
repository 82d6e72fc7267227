// --ddp-preflight, the profile's `preflight:` keys, plugstack.conf's preflight=, and the command
// line of ddp-preflight the plugin builds from them.
#include <gtest/gtest.h>

#include "options.hpp"
#include "preflight.hpp"
#include "profile.hpp"
#include "profile_test_util.hpp"

namespace p = ddp::plan;
using profile_test::error_of;
using profile_test::TempDir;

namespace {

p::Profile parsed(const TempDir& dir, const std::string& text, const std::string& name = "t") {
  return p::load_profile_file(dir.write(name + ".yaml", "name: " + name + "\n" + text));
}

std::string error_in(const TempDir& dir, const std::string& text) {
  return error_of([&] { parsed(dir, text); });
}

p::StepPlan step(std::optional<bool> option, const p::Profile& profile) {
  p::StepPlan s;
  s.options.preflight = option;
  s.profile = p::resolve_for_node(profile, "n1");
  return s;
}

}  // namespace

TEST(PreflightOption, FlagOrYesOrNo) {
  p::UserOptions o;
  p::apply_user_option(o, p::kOptPreflight, "");
  EXPECT_EQ(o.preflight, true);
  EXPECT_TRUE(o.requested);
  p::apply_user_option(o, p::kOptPreflight, "no");
  EXPECT_EQ(o.preflight, false);
  p::apply_user_option(o, p::kOptPreflight, "yes");
  EXPECT_EQ(o.preflight, true);
  const std::string e = error_of([] {
    p::UserOptions x;
    p::apply_user_option(x, p::kOptPreflight, "maybe");
  });
  EXPECT_NE(e.find("--ddp-preflight='maybe' is not a boolean; allowed: yes or no"), std::string::npos) << e;
}

TEST(PreflightOption, PlugstackNamesTheProgramByAbsolutePath) {
  EXPECT_FALSE(p::parse_plugstack_args({}).preflight_program);
  EXPECT_EQ(p::parse_plugstack_args({"preflight=/opt/ddp/bin/ddp-preflight"}).preflight_program,
            "/opt/ddp/bin/ddp-preflight");
  const std::string e = error_of([] { p::parse_plugstack_args({"preflight=ddp-preflight"}); });
  EXPECT_NE(e.find("plugstack.conf preflight='ddp-preflight' must be the absolute path"), std::string::npos) << e;
}

TEST(PreflightProfile, ReadsEveryKeyAndExtendsMergeThem) {
  TempDir dir;
  dir.write("base.yaml", "name: base\npreflight: {min_busbw_gbps: 20, timeout_s: 90}\n");
  const p::Profile prof = parsed(dir,
                                 "extends: base\npreflight:\n  enabled: true\n  max_latency_us: 45.5\n"
                                 "  min_fraction_of_median: 0.7\n");
  EXPECT_EQ(prof.preflight.enabled, true);
  EXPECT_EQ(prof.preflight.min_busbw_gbps, 20.0);
  EXPECT_EQ(prof.preflight.max_latency_us, 45.5);
  EXPECT_EQ(prof.preflight.min_fraction_of_median, 0.7);
  EXPECT_EQ(prof.preflight.timeout_s, 90u);
  EXPECT_TRUE(parsed(dir, "description: none\n").preflight.empty());
}

TEST(PreflightProfile, BadValuesPointAtTheLine) {
  TempDir dir;
  std::string e = error_in(dir, "preflight: {min_busbw_gbps: fast}\n");
  EXPECT_NE(e.find("t.yaml:2:29: preflight.min_busbw_gbps='fast' is not a number in 1e-06..1e+06"),
            std::string::npos) << e;
  EXPECT_NE(e.find("write a plain decimal number"), std::string::npos) << e;
  e = error_in(dir, "preflight: {min_busbw_gbps: -1}\n");
  EXPECT_NE(e.find("is not a number"), std::string::npos) << e;
  e = error_in(dir, "preflight: {min_fraction_of_median: 1.5}\n");
  EXPECT_NE(e.find("preflight.min_fraction_of_median='1.5' is not a number in 1e-06..1"), std::string::npos) << e;
  e = error_in(dir, "preflight: {timeout_s: 5}\n");
  EXPECT_NE(e.find("preflight.timeout_s='5' is not a whole number in 10..3600"), std::string::npos) << e;
  e = error_in(dir, "preflight: {enabled: sometimes}\n");
  EXPECT_NE(e.find("is not a boolean"), std::string::npos) << e;
  e = error_in(dir, "preflight: {min_bw: 3}\n");
  EXPECT_NE(e.find("min_bw"), std::string::npos) << e;
  e = error_in(dir, "nodes:\n  - {match: n1, preflight: {enabled: true}}\n");
  EXPECT_NE(e.find("preflight"), std::string::npos) << "step-wide, not per node: " << e;
}

TEST(PreflightPlan, TheInstalledProgramUnlessPlugstackSaysOtherwise) {
  TempDir dir;
  const auto run = p::plan_preflight(step(true, parsed(dir, "description: x\n", "x")), {});
  ASSERT_TRUE(run);
  EXPECT_EQ(run->argv.front(), DDP_PREFLIGHT_PROGRAM_EXPECTED);
}

TEST(PreflightPlan, TheOptionWinsOverTheProfile) {
  TempDir dir;
  const p::Profile on = parsed(dir, "preflight: {enabled: true}\n", "on");
  const p::Profile off = parsed(dir, "description: nothing\n", "quiet");
  const p::PlugstackConfig config;
  EXPECT_TRUE(p::plan_preflight(step(std::nullopt, on), config));
  EXPECT_FALSE(p::plan_preflight(step(false, on), config));
  EXPECT_FALSE(p::plan_preflight(step(std::nullopt, off), config));
  EXPECT_TRUE(p::plan_preflight(step(true, off), config));
}

TEST(PreflightPlan, ThresholdsBecomeTheProgramsFlags) {
  TempDir dir;
  const p::Profile prof = parsed(
      dir, "preflight: {min_busbw_gbps: 12.5, max_latency_us: 80, min_fraction_of_median: 0.6, timeout_s: 60}\n",
      "vega");
  p::PlugstackConfig config;
  config.preflight_program = "/usr/bin/ddp-preflight";
  const auto run = p::plan_preflight(step(true, prof), config);
  ASSERT_TRUE(run);
  EXPECT_EQ(run->timeout_s, 60u);
  EXPECT_EQ(run->argv, (std::vector<std::string>{
                           "/usr/bin/ddp-preflight", "--timeout", "30", "--min-busbw-gbps", "12.5",
                           "--max-latency-us", "80", "--min-fraction-of-median", "0.6",
                           "--thresholds-from", "profile vega"}));
  const auto plain = p::plan_preflight(step(true, parsed(dir, "description: x\n", "x")), config);
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->timeout_s, p::kDefaultPreflightTimeout);
  EXPECT_EQ(plain->argv, (std::vector<std::string>{"/usr/bin/ddp-preflight", "--timeout", "60"}));
}

// Without a profile's timeout_s, a larger step gets longer: 1,024 nodes of 8 ranks are not ended
// by the two minutes that fit two nodes; a profile's figure stays as written.
TEST(PreflightPlan, TheDefaultTimeOutGrowsWithTheStep) {
  TempDir dir;
  p::PlugstackConfig config;
  auto large = step(true, parsed(dir, "description: x\n", "x"));
  large.facts.total_tasks = 8192;
  const auto run = p::plan_preflight(large, config);
  ASSERT_TRUE(run);
  EXPECT_EQ(run->timeout_s, 248u);
  EXPECT_EQ(run->argv[2], "124");
  auto fixed = step(true, parsed(dir, "preflight: {timeout_s: 60}\n", "x"));
  fixed.facts.total_tasks = 8192;
  EXPECT_EQ(p::plan_preflight(fixed, config)->timeout_s, 60u);
}

// --ddp-retries: a failed preflight that names nodes requeues the job without them, so
// ddp-preflight is told the job, the retries and the requeues so far; without retries, nothing.
TEST(PreflightPlan, RetriesAreToldToTheProgram) {
  TempDir dir;
  p::PlugstackConfig config;
  config.preflight_program = "/usr/bin/ddp-preflight";
  auto s = step(true, parsed(dir, "description: x\n", "x"));
  s.facts.job_id = 42;
  s.facts.restart_count = 1;
  s.watch = p::WatchPlan{};
  EXPECT_EQ(p::plan_preflight(s, config)->argv.size(), 3u);
  s.watch->retries = 2;
  const auto run = p::plan_preflight(s, config);
  EXPECT_EQ(run->argv, (std::vector<std::string>{"/usr/bin/ddp-preflight", "--timeout", "60", "--job",
                                                 "42", "--retries", "2", "--restarts", "1"}));
  // The plugin waits the longer for it: a requeue after a failed preflight takes requests.
  EXPECT_EQ(run->timeout_s, p::kDefaultPreflightTimeout + p::kPreflightRequeueSeconds);
}
