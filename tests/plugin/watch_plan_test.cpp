// The failure watch in the plugin core: --ddp-watch, plugstack's watch=, the profile's `watch:`,
// and what a node's ddp-watch is told.
#include <gtest/gtest.h>

#include "error.hpp"
#include "planner.hpp"
#include "profile.hpp"
#include "profile_json.hpp"
#include "profile_test_util.hpp"
#include "watch_plan.hpp"

namespace p = ddp::plan;
using profile_test::error_of;
using profile_test::TempDir;

namespace {

std::string option_error(const std::string& value) {
  return error_of([&] {
    p::UserOptions o;
    p::apply_user_option(o, "ddp-watch", value);
  });
}

// Node NODE (0 or 1) of job 17's step on gn[01-02], TASKS ranks on each node.
p::StepFacts two_node_step(unsigned node, unsigned tasks) {
  p::StepFacts f;
  f.job_id = 17;
  f.nodes = 2;
  f.node_id = node;
  f.nodelist = "gn[01-02]";
  f.hostname = node == 0 ? "gn01" : "gn02";
  f.total_tasks = 2 * tasks;
  f.local_tasks = tasks;
  f.cpus_on_node = 8;
  return f;
}

}  // namespace

TEST(WatchOption, ValuesAndRefusals) {
  p::UserOptions o;
  p::apply_user_option(o, "ddp-watch", "");
  ASSERT_TRUE(o.watch);
  EXPECT_TRUE(o.watch->on);
  EXPECT_FALSE(o.watch->timeout);
  p::apply_user_option(o, "ddp-watch", "90");
  EXPECT_EQ(o.watch->timeout, 90u);
  EXPECT_FALSE(o.watch->hung_timeout);
  p::apply_user_option(o, "ddp-watch", "20:60");
  EXPECT_EQ(o.watch->timeout, 20u);
  EXPECT_EQ(o.watch->hung_timeout, 60u);
  EXPECT_NE(option_error("20:1").find("not a time-out"), std::string::npos);
  p::apply_user_option(o, "ddp-watch", "off");
  EXPECT_FALSE(o.watch->on);
  EXPECT_NE(option_error("4").find("--ddp-watch='4' is not a time-out; allowed: 5..86400 seconds"),
            std::string::npos);
  EXPECT_NE(option_error("1m").find("or off"), std::string::npos);
  EXPECT_EQ(p::parse_plugstack_args({"watch=/opt/ddp-watch"}).watch_program, "/opt/ddp-watch");
  EXPECT_THROW(p::parse_plugstack_args({"watch=ddp-watch"}), p::PlanError);
  EXPECT_EQ(p::watch_program({}), DDP_WATCH_PROGRAM_EXPECTED);
}

TEST(WatchProfile, TheWatchKeyIsCheckedMergedAndShown) {
  TempDir dir;
  dir.write("base.yaml", "name: base\nwatch: {enabled: true, timeout: 120}\n");
  dir.write("child.yaml", "name: child\nextends: base\nwatch: {timeout: 60}\n");
  const p::Profile child = p::load_profile(dir.path(), "child");
  EXPECT_EQ(child.watch.enabled, true);
  EXPECT_EQ(child.watch.timeout, 60u);
  EXPECT_EQ(p::resolve_for_node(child, "n1").watch.timeout, 60u);
  EXPECT_EQ(p::profile_to_json(child)["watch"].dump(), R"({"enabled":true,"retries":null,"timeout":60})");
  const auto error = [&](const std::string& text) {
    const std::string path = dir.write("t.yaml", "name: t\n" + text);
    return error_of([&] { p::load_profile_file(path); });
  };
  EXPECT_NE(error("watch: {timeout: 1}\n").find("watch.timeout='1' is not a whole number in 5..86400"),
            std::string::npos);
  EXPECT_NE(error("watch: {interval: 3}\n").find("interval"), std::string::npos);
}

TEST(WatchPlan, EachNodesWatchIsToldTheStepAndWhereTheHeadListens) {
  p::StepFacts f = two_node_step(1, 4);
  f.step_id = 2;
  f.watch_nonce = "00112233aabbccdd";
  const auto step = p::plan_step(f, {}, {});
  ASSERT_TRUE(step.watch);
  EXPECT_EQ(step.watch->reason, "default");
  const auto a = p::watch_args(step, *step.watch);
  EXPECT_EQ(ddp::watch::to_argv(a),
            (std::vector<std::string>{"--job", "17", "--step", "2", "--node", "1", "--nodes", "2",
                                      "--host", "gn02", "--world", "8", "--head", "gn01", "--ports",
                                      "20000-29999", "--timeout", "45",
                                      "--hung-timeout", "300", "--control-fd", "3",
                                      "--reply-fd", "4"}));
  // The error directory is the node's own (a TMPDIR may be shared), and goes in the watch's
  // environment, not on its command line.
  EXPECT_EQ(a.error_dir, "/tmp/ddp-17.2-00112233aabbccdd-node1");
  // What the plugin tells it, the watch reads back.
  EXPECT_EQ(ddp::watch::to_argv(ddp::watch::parse_watch_args(ddp::watch::to_argv(a))),
            ddp::watch::to_argv(a));
}

TEST(WatchRetries, TheOptionTheProfileAndWhatTheHeadIsTold) {
  p::UserOptions o;
  p::apply_user_option(o, "ddp-retries", "2");
  EXPECT_EQ(o.retries, 2u);
  EXPECT_NE(error_of([] {
              p::UserOptions x;
              p::apply_user_option(x, "ddp-retries", "many");
            }).find("--ddp-retries"),
            std::string::npos);
  EXPECT_THROW(p::apply_user_option(o, "ddp-retries", "101"), p::PlanError);

  TempDir dir;
  dir.write("site.yaml", "name: site\nwatch: {retries: 1}\n");
  const p::Profile site = p::load_profile(dir.path(), "site");
  EXPECT_EQ(site.watch.retries, 1u);
  const std::string bad = dir.write("bad.yaml", "name: bad\nwatch: {retries: 1000}\n");
  EXPECT_NE(error_of([&] { p::load_profile_file(bad); }).find("watch.retries"), std::string::npos);

  p::StepFacts f = two_node_step(0, 1);
  f.restart_count = 1;
  // The profile's default, unless the user says otherwise.
  const auto from_site = p::plan_step(f, {}, {}, p::resolve_for_node(site, "gn01"));
  ASSERT_TRUE(from_site.watch);
  EXPECT_EQ(from_site.watch->retries, 1u);
  const auto a = p::watch_args(from_site, *from_site.watch);
  EXPECT_EQ(a.retries, 1u);
  EXPECT_EQ(a.restarts, 1u);
  const auto back = ddp::watch::parse_watch_args(ddp::watch::to_argv(a));
  EXPECT_EQ(back.retries, 1u);
  EXPECT_EQ(back.restarts, 1u);
  p::UserOptions none;
  p::apply_user_option(none, "ddp-retries", "0");
  EXPECT_EQ(p::plan_step(f, none, {}, p::resolve_for_node(site, "gn01")).watch->retries, 0u);
  // Retries without the watch that names the node: refused, saying which option to drop.
  p::UserOptions unwatched = o;
  p::apply_user_option(unwatched, "ddp-watch", "off");
  EXPECT_NE(error_of([&] { p::plan_step(f, unwatched, {}); })
                .find("--ddp-retries=2 needs the failure watch, and --ddp-watch=off"),
            std::string::npos);
}
