// What the ranks of a preflight tell each other: JSON that round-trips, and a message that does
// not decode is an error naming its sender.
#include "messages.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "../common/error_of.hpp"
#include "ddp/error.hpp"

namespace {

namespace pf = ddp::preflight;
using pf::Status;

std::string error_of(const std::function<void()>& f) { return ddp::test::error_of<ddp::Error>(f); }

TEST(PreflightMessages, ACheckReportRoundTripsAsJson) {
  const pf::RankReport r{3, 1, "n2", "0000:3b:00.0",
                         {{"interfaces", Status::Ok, "eth0"}, {"gpus", Status::Failed, "a\tb\n\"c\""}}};
  const std::string text = pf::encode_report(r);
  EXPECT_EQ(nlohmann::json::parse(text)["checks"][1]["status"], "failed");  // any JSON reader
  const auto back = pf::decode_report(text, 3);
  EXPECT_EQ(back.rank, 3);
  EXPECT_EQ(back.node_rank, 1);
  EXPECT_EQ(back.host, "n2");
  EXPECT_EQ(back.gpu_bus_id, "0000:3b:00.0");
  ASSERT_EQ(back.checks.size(), 2u);
  EXPECT_EQ(back.checks[1].status, Status::Failed);
  EXPECT_EQ(back.checks[1].detail, "a\tb\n\"c\"");  // kept as it was
}

TEST(PreflightMessages, AReportThatDoesNotDecodeNamesItsRank) {
  const std::string tail =
      ": that rank runs another ddp-preflight, or its message was damaged on the way. Fix: install "
      "the same slurm-ddp release on every node";
  EXPECT_EQ(error_of([] { pf::decode_report("rank\t3\t1\tn2\t\n", 3); }),
            "the check report of rank 3 cannot be read (parse error at line 1, column 1: syntax "
            "error while parsing value - invalid literal; last read: 'r')" + tail);
  EXPECT_EQ(error_of([] { pf::decode_report(R"({"rank":3,"node_rank":1,"host":"n2","checks":[]})", 3); }),
            "the check report of rank 3 cannot be read (key 'gpu_bus_id' not found)" + tail);
  EXPECT_EQ(error_of([] {
              pf::decode_report(R"({"rank":3,"node_rank":1,"host":"n2","gpu_bus_id":"","checks":)"
                                R"([{"check":"gpus","status":"fine","detail":""}]})", 3);
            }),
            "the check report of rank 3 cannot be read (status 'fine' is none of ok, failed, skipped)" + tail);
  EXPECT_EQ(error_of([] {
              pf::decode_report(R"({"rank":4,"node_rank":1,"host":"n2","gpu_bus_id":"","checks":[]})", 3);
            }),
            "the check report of rank 3 cannot be read (it says it is rank 4)" + tail);
  EXPECT_EQ(error_of([] { pf::decode_report("", 7); }).substr(0, 43),
            "the check report of rank 7 cannot be read (");
}

TEST(PreflightMessages, LinksRoundTripAndABadOneNamesItsRank) {
  pf::Measurement m;
  m.nodes = {"n1", "n3"};
  m.ranks = 2;
  m.latency_us = 189.25;
  m.busbw_gbps = 0.0031;
  m.peak_bytes = 256 << 10;
  m.cut_short = true;
  const auto back = pf::decode_links(pf::encode_links({m, m}), 0);
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0].name, "n1 <-> n3");
  EXPECT_EQ(back[0].latency_us, 189.25);
  EXPECT_EQ(back[0].busbw_gbps, 0.0031);
  EXPECT_EQ(back[0].peak_bytes, 256u << 10);
  EXPECT_TRUE(back[0].cut_short);
  EXPECT_TRUE(pf::decode_links("[]", 5).empty());
  EXPECT_EQ(error_of([] { pf::decode_links(R"({"nodes":["n1","n2"]})", 5); }).substr(0, 73),
            "the link measurements of rank 5 cannot be read (not a list of links): tha");
  EXPECT_EQ(error_of([] { pf::decode_links(R"([{"nodes":["n1"],"ranks":2}])", 5); }).substr(0, 72),
            "the link measurements of rank 5 cannot be read (a link between 1 nodes):");
}

}  // namespace
