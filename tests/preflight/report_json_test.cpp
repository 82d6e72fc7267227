// ddp-preflight --json: the verdict, every check and measurement, the standings and every node to
// exclude, in one document a script reads.
#include "report_json.hpp"

#include <gtest/gtest.h>

#include "report.hpp"

namespace {

namespace pf = ddp::preflight;

pf::Measurement measured_link(const std::string& a, const std::string& b, double busbw) {
  pf::Measurement m;
  m.nodes = {a, b};
  m.name = a + " <-> " + b;
  m.ranks = 2;
  m.latency_us = 150;
  m.busbw_gbps = busbw;
  m.peak_bytes = 64 << 20;
  return m;
}

TEST(PreflightJson, AFailedMeasurementNamesTheNodeToExclude) {
  pf::PreflightResult r;
  r.stopped_at = "measurements";
  r.ranks = 3;
  r.nodes = {"n1", "n2", "n3"};
  r.backend = "gloo";
  r.rendezvous = "n1:22465";
  r.checks = {{"contract", pf::Status::Ok, "3 ranks"}, {"hcas", pf::Status::Skipped, "none chosen"}};
  r.links = {measured_link("n1", "n3", 0.003), measured_link("n1", "n2", 0.7),
             measured_link("n2", "n3", 0.003)};
  ddp::AllreduceSweep sweep;
  sweep.ranks = 3;
  sweep.samples = {ddp::allreduce_sample(8, 5, 0.0004, 3), ddp::allreduce_sample(262144, 2, 0.06, 3)};
  sweep.cut_short = true;
  r.sweep = sweep;
  r.all = pf::measurement("all ranks", {}, sweep);
  r.thresholds.min_busbw_gbps = 0.05;
  r.thresholds.origin = "profile lab-preflight";
  r.analysis = pf::analyse(r.all, r.links, r.thresholds);
  r.reason = pf::failure_message(r.analysis);
  const auto j = pf::result_json(r);
  EXPECT_EQ(j["format"], "ddp-preflight/1");
  EXPECT_EQ(j["verdict"], "fail");
  EXPECT_EQ(j["exclude"].get<std::vector<std::string>>(), std::vector<std::string>{"n3"});
  EXPECT_EQ(j["failures"].size(), 3u);
  EXPECT_NE(j["reason"].get<std::string>().find("--exclude=n3"), std::string::npos);
  EXPECT_EQ(j["checks"][1]["status"], "skipped");
  EXPECT_EQ(j["links"].size(), 3u);
  EXPECT_EQ(j["links"][1]["vs_median"], 1.0);
  EXPECT_EQ(j["all_ranks"]["cut_short"], true);
  EXPECT_TRUE(j["all_ranks"]["vs_median"].is_null());
  EXPECT_EQ(j["all_ranks_sweep"].size(), 2u);
  EXPECT_EQ(j["all_ranks_sweep"][1]["bytes"], 262144);
  EXPECT_EQ(j["slowest_node"]["name"], "n3");
  EXPECT_EQ(j["slowest_node"]["slow"], true);
  EXPECT_EQ(j["thresholds"]["min_busbw_gbps"], 0.05);
  EXPECT_TRUE(j["thresholds"]["max_latency_us"].is_null());
  // Every key is there whatever the outcome, so a script never meets a missing one.
  const auto keys = [](const nlohmann::ordered_json& o) {
    std::vector<std::string> out;
    for (const auto& [k, v] : o.items()) out.push_back(k);
    return out;
  };
  EXPECT_EQ(keys(j), keys(pf::result_json(pf::PreflightResult{})));
}

TEST(PreflightJson, StoppedAtTheChecksNothingIsMeasured) {
  pf::PreflightResult r;
  r.stopped_at = "checks";
  r.reason = "a check failed on some rank";
  r.checks = {{"interfaces", pf::Status::Failed, "GLOO_SOCKET_IFNAME=eth9: no interface eth9"}};
  const auto j = pf::result_json(r);
  EXPECT_EQ(j["verdict"], "fail");
  EXPECT_EQ(j["stopped_at"], "checks");
  EXPECT_EQ(j["checks"][0]["status"], "failed");
  EXPECT_TRUE(j["all_ranks"].is_null());
  EXPECT_TRUE(j["backend"].is_null());
  EXPECT_TRUE(j["links"].empty());
  EXPECT_TRUE(j["exclude"].empty());
}

}  // namespace
