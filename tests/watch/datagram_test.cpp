#include "datagram.hpp"

#include <gtest/gtest.h>

namespace w = ddp::watch;

namespace {
const std::string kKey = "0123456789abcdef0123456789abcdef";
}

TEST(WatchDatagram, FailureSurvivesTheWire) {
  w::Datagram d;
  d.type = w::Datagram::Type::Fail;
  d.node = 3;
  d.id = 7;
  d.failure.how = w::How::Signal;
  d.failure.rank = 13;
  d.failure.node = 3;
  d.failure.host = "gn04";
  d.failure.code = 9;
  d.failure.at_ns = 1700000000123456789;
  d.failure.error = "RuntimeError: \"boom\"\n";
  d.failure.where = "File \"t.py\", line 3, in f";
  const auto back = w::decode(w::encode(d, kKey), kKey);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->type, w::Datagram::Type::Fail);
  EXPECT_EQ(back->node, 3u);
  EXPECT_EQ(back->id, 7u);
  EXPECT_EQ(back->failure.how, w::How::Signal);
  EXPECT_EQ(back->failure.rank, 13u);
  EXPECT_EQ(back->failure.code, 9);
  EXPECT_EQ(back->failure.at_ns, 1700000000123456789);
  EXPECT_EQ(back->failure.error, d.failure.error);
  EXPECT_EQ(back->failure.where, d.failure.where);
}

TEST(WatchDatagram, AnythingNotOursIsDropped) {
  w::Datagram beat;
  beat.node = 1;
  beat.host = "n2";
  beat.ranks = "2-3";
  const std::string bytes = w::encode(beat, kKey);
  EXPECT_TRUE(w::decode(bytes, kKey));
  EXPECT_FALSE(w::decode(bytes, "ffffffffffffffffffffffffffffffff"));  // another step's key
  EXPECT_FALSE(w::decode("", kKey));
  EXPECT_FALSE(w::decode("not json", kKey));
  EXPECT_FALSE(w::decode("{\"v\":1}", kKey));
  EXPECT_FALSE(w::decode(std::string(w::kMaxDatagram + 1, '{'), kKey));
  std::string no_id = bytes;
  EXPECT_FALSE(w::decode("{\"v\":1,\"k\":\"" + kKey + "\",\"t\":\"ack\",\"n\":0}", kKey));
  EXPECT_FALSE(w::decode("{\"v\":2,\"k\":\"" + kKey + "\",\"t\":\"beat\",\"n\":0}", kKey));
}

TEST(WatchDatagram, HugeOrBinaryMessagesAreCutToFit) {
  w::Datagram d;
  d.type = w::Datagram::Type::Fail;
  d.failure.error = std::string(100000, '\x01') + "\xff\xfe";
  d.failure.where = std::string(5000, 'x');
  d.failure.host = std::string(5000, 'h');
  const std::string bytes = w::encode(d, kKey);
  EXPECT_LE(bytes.size(), w::kMaxDatagram);
  const auto back = w::decode(bytes, kKey);
  ASSERT_TRUE(back);
  EXPECT_LE(back->failure.where.size(), 240u);
}

TEST(WatchDatagram, KeysAreThirtyTwoLowercaseHexDigits) {
  EXPECT_TRUE(w::valid_key(kKey));
  EXPECT_FALSE(w::valid_key(""));
  EXPECT_FALSE(w::valid_key("0123456789ABCDEF0123456789abcdef"));
  EXPECT_FALSE(w::valid_key(kKey + "0"));
}
