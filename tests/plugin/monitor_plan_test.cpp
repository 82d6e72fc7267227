// --ddp-monitor in the plugin core: the option, plugstack's monitor=, the profile's `monitor:`,
// which of them wins, and what the sampler of a node is told (GPUs, bus ids, NICs).
#include <gtest/gtest.h>

#include <filesystem>

#include "error.hpp"
#include "monitor_plan.hpp"
#include "planner.hpp"
#include "profile.hpp"
#include "profile_json.hpp"
#include "profile_test_util.hpp"

namespace p = ddp::plan;
using profile_test::error_of;
using profile_test::TempDir;

namespace {

p::UserOptions with_monitor(const std::string& value) {
  p::UserOptions o;
  p::apply_user_option(o, "ddp-monitor", value);
  return o;
}

p::ResolvedProfile profile_with(std::optional<bool> enabled, std::optional<unsigned> interval,
                                std::optional<std::string> dir) {
  p::ResolvedProfile r;
  r.name = "site";
  r.monitor = {enabled, interval, dir};
  return r;
}

p::StepFacts one_node(unsigned tasks) {
  p::StepFacts f;
  f.job_id = 17;
  f.step_id = 2;
  f.nodelist = "gn01";
  f.hostname = "gn01";
  f.total_tasks = tasks;
  f.local_tasks = tasks;
  f.cpus_on_node = 8;
  return f;
}

}  // namespace

TEST(MonitorOption, ValuesAndErrors) {
  EXPECT_TRUE(with_monitor("").monitor->on);
  EXPECT_FALSE(with_monitor("").monitor->interval);
  EXPECT_EQ(with_monitor("30").monitor->interval, 30u);
  EXPECT_FALSE(with_monitor("off").monitor->on);
  EXPECT_TRUE(with_monitor("1").requested);
  for (const char* bad : {"0", "3601", "5s", "-1", "on"})
    EXPECT_EQ(error_of([&] { with_monitor(bad); }),
              std::string("--ddp-monitor='") + bad +
                  "' is not a sampling interval; allowed: 1..3600 seconds, or off (no "
                  "monitoring, even where the profile turns it on)");
}

TEST(MonitorOption, PlugstackNamesTheSampler) {
  EXPECT_FALSE(p::parse_plugstack_args({}).monitor_program);
  EXPECT_EQ(p::monitor_program(p::parse_plugstack_args({})), DDP_MONITOR_PROGRAM_EXPECTED);
  const auto c = p::parse_plugstack_args({"monitor=/opt/ddp/ddp-monitor"});
  EXPECT_EQ(p::monitor_program(c), "/opt/ddp/ddp-monitor");
  EXPECT_NE(error_of([] { p::parse_plugstack_args({"monitor=ddp-monitor"}); })
                .find("must be the absolute path of the ddp-monitor program"),
            std::string::npos);
}

TEST(MonitorPlan, TheOptionWinsOverTheProfile) {
  EXPECT_FALSE(p::plan_monitor({}, {}));
  EXPECT_FALSE(p::plan_monitor({}, profile_with(false, 30, std::nullopt)));
  EXPECT_FALSE(p::plan_monitor({}, profile_with(std::nullopt, 30, std::nullopt)));
  auto m = p::plan_monitor({}, profile_with(true, 30, std::string("/scratch/%u")));
  ASSERT_TRUE(m);
  EXPECT_EQ(m->interval, 30u);
  EXPECT_EQ(m->dir, "/scratch/%u");
  EXPECT_EQ(m->reason, "profile site (monitor.enabled)");
  m = p::plan_monitor(with_monitor(""), {});
  EXPECT_EQ(m->interval, 10u);  // the default
  EXPECT_FALSE(m->dir);         // the job's working directory
  m = p::plan_monitor(with_monitor(""), profile_with(false, 60, std::nullopt));
  EXPECT_EQ(m->interval, 60u);  // asked without SECONDS: the site's interval
  m = p::plan_monitor(with_monitor("5"), profile_with(true, 60, std::nullopt));
  EXPECT_EQ(m->interval, 5u);
  EXPECT_EQ(m->reason, "--ddp-monitor=5");
  EXPECT_FALSE(p::plan_monitor(with_monitor("off"), profile_with(true, 60, std::nullopt)));
  // The step plan carries it.
  EXPECT_EQ(p::plan_step(one_node(1), with_monitor("7"), {}).monitor->interval, 7u);
}

TEST(MonitorPlan, TheSamplerOfANodeWithoutTopologyGetsItsInterfaces) {
  p::StepFacts f = one_node(2);
  f.net.interfaces = {{"lo", true, true, true}, {"eth0", true, false, true},
                      {"eth1", false, false, true}, {"ib0", true, false, false}};
  const auto step = p::plan_step(f, with_monitor("3"), {});
  const p::GpuFacts gpus{{0, 1}, std::string("0,1")};
  const auto a = p::sampler_args(step, *step.monitor, gpus, p::place_node(step, gpus));
  EXPECT_EQ(ddp::monitor::to_argv(a),
            (std::vector<std::string>{"--interval", "3", "--job", "17", "--step", "2", "--node",
                                      "gn01", "--node-index", "0", "--nodes", "1", "--tasks", "2",
                                      "--gpu", "0", "--gpu", "1", "--net", "eth0", "--control-fd",
                                      "3", "--reply-fd", "4"}));
}

TEST(MonitorPlan, RealTopologiesGiveBusIdsAndEachRanksHca) {
  const auto xml = std::filesystem::path(DDP_TOPOLOGY_DIR) / "coral-lassen.xml";
  p::StepFacts f = one_node(4);
  f.topology = p::load_topology(xml.string());
  f.allowed_cpus = f.topology->cpus;
  f.net.interfaces = {{"ib0", true, false, true}};
  p::ResolvedProfile prof = profile_with(true, 20, std::string("/p/%u/mon"));
  prof.socket_interfaces = {"ib0"};
  const auto step = p::plan_step(f, {}, {}, prof);
  ASSERT_TRUE(step.monitor);
  const p::GpuFacts gpus{{0, 1, 2, 3}, std::nullopt};
  const auto a = p::sampler_args(step, *step.monitor, gpus, p::place_node(step, gpus));
  EXPECT_EQ(a.interval, 20u);
  EXPECT_EQ(a.dir, "/p/%u/mon");
  ASSERT_EQ(a.gpus.size(), 4u);
  for (unsigned i = 0; i < 4; ++i) {
    EXPECT_EQ(a.gpus[i].index, i);
    EXPECT_EQ(a.gpus[i].busid, f.topology->gpus[i].busid);
    EXPECT_FALSE(a.gpus[i].busid.empty());
  }
  EXPECT_EQ(a.nets, std::vector<std::string>{"ib0"});
  EXPECT_EQ(a.ibs, (std::vector<std::string>{"mlx5_0:1", "mlx5_1:1", "mlx5_2:1", "mlx5_3:1"}));
}

TEST(MonitorProfile, TheMonitorKeyIsCheckedMergedAndShown) {
  TempDir dir;
  dir.write("base.yaml", "name: base\nmonitor: {enabled: true, interval: 60, dir: /scratch/%u/mon}\n");
  dir.write("child.yaml", "name: child\nextends: base\nmonitor: {interval: 15}\n");
  const p::Profile child = p::load_profile(dir.path(), "child");
  EXPECT_EQ(child.monitor.enabled, true);
  EXPECT_EQ(child.monitor.interval, 15u);
  EXPECT_EQ(child.monitor.dir, "/scratch/%u/mon");
  EXPECT_EQ(p::resolve_for_node(child, "n1").monitor.interval, 15u);
  EXPECT_EQ(p::profile_to_json(child)["monitor"].dump(),
            R"({"dir":"/scratch/%u/mon","enabled":true,"interval":15})");
  EXPECT_EQ(p::profile_to_json(p::resolve_for_node(p::load_profile(dir.path(), "base"), "n1"))
                ["monitor"]["interval"],
            60);

  const auto error = [&](const std::string& text) {
    const std::string path = dir.write("t.yaml", "name: t\n" + text);
    return error_of([&] { p::load_profile_file(path); });
  };
  EXPECT_NE(error("monitor: {interval: 0}\n")
                .find(":2:21: monitor.interval='0' is not a whole number in 1..3600"),
            std::string::npos);
  EXPECT_NE(error("monitor: {dir: scratch}\n")
                .find(":2:16: monitor.dir='scratch' is not an absolute path. Fix: write the "
                      "directory from '/'"),
            std::string::npos);
  EXPECT_NE(error("monitor: {dir: /s/%h}\n")
                .find("monitor.dir='/s/%h' holds a '%' other than %u (the user), %j (the job "
                      "id) or %% (a '%')"),
            std::string::npos);
  EXPECT_NE(error("monitor: {enabled: yes}\n").find("monitor.enabled='yes' is not a boolean"),
            std::string::npos);
  EXPECT_NE(error("monitor: {every: 5}\n").find("'every' is not a key of monitor; allowed: "
                                                "enabled, interval, dir"),
            std::string::npos);
  EXPECT_NE(error("nodes:\n  - {match: n1, monitor: {enabled: true}}\n")
                .find("'monitor' is not a key of nodes[0]"),
            std::string::npos);
}
