// libddp's heartbeat datagrams (runtime/src/beat_wire.hpp): what one side encodes the other reads
// back, and anything not of this job, not of this size or not for this rank is refused.
#include "beat_wire.hpp"

#include <cstddef>
#include <cstdint>
#include <string>

#include <gtest/gtest.h>

namespace ddp::detail {
namespace {

constexpr std::uint64_t kWireToken = 0x0123456789abcdefULL;

Beat a_beat() {
  Beat b;
  b.token = kWireToken;
  b.rank = 5;
  b.world = 16;
  b.state = RankState::Failed;
  b.heard_verdict = true;
  b.census = 3;
  b.wants = 4;
  b.host = "n2";
  return b;
}

TEST(BeatWire, ABeatReadsBackAsItWasSent) {
  const auto got = decode_beat(encode(a_beat()), kWireToken, 16);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->rank, 5u);
  EXPECT_EQ(got->state, RankState::Failed);
  EXPECT_TRUE(got->heard_verdict);
  EXPECT_EQ(got->census, 3u);
  EXPECT_EQ(got->wants, 4u);
  EXPECT_EQ(got->host, "n2");
}

TEST(BeatWire, AnAnswerReadsBackForItsRankAlone) {
  BeatAnswer a;
  a.token = kWireToken;
  a.rank = 5;
  a.world = 16;
  a.recorded = RankState::Done;
  a.census_open = true;
  a.census = 7;
  a.clear = 6;
  a.counted = 5;
  a.verdict = "rank 3 of 16 (on n1) stopped responding";
  const std::string bytes = encode(a);
  const auto got = decode_answer(bytes, kWireToken, 16, 5);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->recorded, RankState::Done);
  EXPECT_TRUE(got->census_open);
  EXPECT_EQ(got->census, 7u);
  EXPECT_EQ(got->clear, 6u);
  EXPECT_EQ(got->counted, 5u);
  EXPECT_EQ(got->verdict, a.verdict);
  EXPECT_FALSE(decode_answer(bytes, kWireToken, 16, 4)) << "another rank's answer";
  EXPECT_FALSE(decode_beat(bytes, kWireToken, 16)) << "an answer is no beat";
  EXPECT_FALSE(decode_answer(encode(a_beat()), kWireToken, 16, 5)) << "a beat is no answer";
}

TEST(BeatWire, AnotherJobsOrABrokenDatagramIsRefused) {
  const std::string good = encode(a_beat());
  EXPECT_FALSE(decode_beat(good, kWireToken + 1, 16)) << "another token";
  EXPECT_FALSE(decode_beat(good, kWireToken, 8)) << "another world";
  for (std::size_t cut = 0; cut < good.size(); ++cut)
    EXPECT_FALSE(decode_beat(good.substr(0, cut), kWireToken, 16)) << "cut at " << cut;
  EXPECT_FALSE(decode_beat(good + "x", kWireToken, 16)) << "a byte more";
  std::string bad = good;
  bad[0] = 'X';
  EXPECT_FALSE(decode_beat(bad, kWireToken, 16)) << "magic";
  bad = good;
  bad[4] = 2;
  EXPECT_FALSE(decode_beat(bad, kWireToken, 16)) << "version";
  bad = good;
  bad[6] = 9;
  EXPECT_FALSE(decode_beat(bad, kWireToken, 16)) << "state";
  bad = good;
  bad[7] = 2;
  EXPECT_FALSE(decode_beat(bad, kWireToken, 16)) << "flags";
  Beat outside = a_beat();
  outside.rank = 16;
  EXPECT_FALSE(decode_beat(encode(outside), kWireToken, 16)) << "a rank outside the world";
}

TEST(BeatWire, ALongHostOrVerdictIsCutToFitOneDatagram) {
  Beat b = a_beat();
  b.host.assign(500, 'h');
  const std::string beat = encode(b);
  EXPECT_LE(beat.size(), kMaxHeartbeatDatagram);
  const auto got = decode_beat(beat, kWireToken, 16);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->host, std::string(kMaxBeatHost, 'h'));

  BeatAnswer a;
  a.token = kWireToken;
  a.rank = 1;
  a.world = 16;
  a.verdict.assign(5000, 'v');
  const std::string answer = encode(a);
  EXPECT_EQ(answer.size(), kMaxHeartbeatDatagram);
  const auto read = decode_answer(answer, kWireToken, 16, 1);
  ASSERT_TRUE(read);
  EXPECT_EQ(read->verdict, a.verdict.substr(0, read->verdict.size()));
}

}  // namespace
}  // namespace ddp::detail
