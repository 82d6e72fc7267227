#include "datagram.hpp"

#include <gtest/gtest.h>

namespace w = ddp::watch;

namespace {
const std::string kKey = "0123456789abcdef0123456789abcdef";
constexpr std::uint16_t kPort = 23456;  // the head's

w::Datagram beat_of(unsigned node) {
  w::Datagram beat;
  beat.node = node;
  beat.host = "n" + std::to_string(node + 1);
  beat.ranks = "2-3";
  return beat;
}
}  // namespace

TEST(WatchDatagram, FailureSurvivesTheWire) {
  w::Datagram d;
  d.type = w::Datagram::Type::Fail;
  d.node = 3;
  d.id = 7;
  d.counts = {{"SIGKILL", 1}, {"exit code 1", 7}};
  d.failure.how = w::How::Signal;
  d.failure.rank = 13;
  d.failure.node = 3;
  d.failure.host = "gn04";
  d.failure.code = 9;
  d.failure.at_ns = 1700000000123456789;
  d.failure.error = "RuntimeError: \"boom\"\n";
  d.failure.where = "File \"t.py\", line 3, in f";
  w::Wire member(kKey, 3, 4), head(kKey, 0, 4);
  const auto back = head.open(member.seal(d, 0, kPort), kPort);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->type, w::Datagram::Type::Fail);
  EXPECT_EQ(back->node, 3u);
  EXPECT_EQ(back->id, 7u);
  EXPECT_EQ(back->counts, d.counts);
  EXPECT_EQ(back->failure.how, w::How::Signal);
  EXPECT_EQ(back->failure.rank, 13u);
  EXPECT_EQ(back->failure.code, 9);
  EXPECT_EQ(back->failure.at_ns, 1700000000123456789);
  EXPECT_EQ(back->failure.error, d.failure.error);
  EXPECT_EQ(back->failure.where, d.failure.where);
}

TEST(WatchDatagram, ABeatsClockTimesSurviveTheWire) {
  w::Datagram d = beat_of(0);
  d.sent_ns = 1700000000000000003;
  d.echo_ns = 1700000000000000001;
  d.heard_ns = 1700000000000000002;
  w::Wire head(kKey, 0, 4), member(kKey, 3, 4);
  const auto back = member.open(head.seal(d, 3, kPort), kPort);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->sent_ns, d.sent_ns);
  EXPECT_EQ(back->echo_ns, d.echo_ns);
  EXPECT_EQ(back->heard_ns, d.heard_ns);
}

TEST(WatchDatagram, TheKeyNeverTravels) {
  w::Wire member(kKey, 1, 2);
  const std::string bytes = member.seal(beat_of(1), 0, kPort);
  EXPECT_EQ(bytes.find(kKey), std::string::npos);
  const auto raw = w::key_bytes(kKey);
  ASSERT_TRUE(raw);
  EXPECT_EQ(bytes.find(*raw), std::string::npos);
  EXPECT_EQ(bytes.find("0123456789abcdef"), std::string::npos);
}

// Whoever holds a port the members send to (a program that took one of the step's ports by
// chance) reads nothing: not the node's name, not a rank's exception.
TEST(WatchDatagram, ABodyIsSecretNotOnlyAuthentic) {
  w::Datagram d;
  d.type = w::Datagram::Type::Fail;
  d.id = 1;
  d.failure.host = "gn17";
  d.failure.error = "KeyError: 'secret-dataset-path'";
  d.failure.where = "File \"/home/alice/train.py\", line 3";
  w::Wire member(kKey, 1, 2);
  const std::string bytes = member.seal(d, 0, kPort);
  for (const char* clear : {"gn17", "secret-dataset-path", "alice", "\"how\"", "fail"})
    EXPECT_EQ(bytes.find(clear), std::string::npos) << clear;
  EXPECT_TRUE(w::Wire(kKey, 0, 2).open(bytes, kPort));
}

TEST(WatchDatagram, TheHeadsPortsComeFromTheKeyWithinTheSitesRange) {
  const ddp::plan::PortRange range{20000, 29999};
  const auto ports = w::head_ports(kKey, range);
  ASSERT_EQ(ports.size(), w::kHeadPorts);
  for (std::size_t i = 0; i < ports.size(); ++i) {
    EXPECT_GE(ports[i], 20000);
    EXPECT_LE(ports[i], 29999);
    for (std::size_t k = 0; k < i; ++k) EXPECT_NE(ports[i], ports[k]);
  }
  EXPECT_EQ(w::head_ports(kKey, range), ports);  // every node computes the same
  EXPECT_NE(w::head_ports("ffffffffffffffffffffffffffffffff", range), ports);  // another step
  EXPECT_EQ(w::head_ports(kKey, {30000, 30000}), (std::vector<std::uint16_t>{30000}));
  EXPECT_EQ(w::head_ports(kKey, {30000, 30001}).size(), 2u);
  EXPECT_TRUE(w::head_ports("not a key", range).empty());
}

// Junk, and another step's datagrams, stop at the step tag: before any decryption.
TEST(WatchDatagram, AnotherStepsDatagramStopsAtTheStepTag) {
  const std::string theirs = w::Wire("ffffffffffffffffffffffffffffffff", 1, 3).seal(beat_of(1), 0, kPort);
  const std::string ours = w::Wire(kKey, 1, 3).seal(beat_of(1), 0, kPort);
  EXPECT_NE(theirs.substr(8, 8), ours.substr(8, 8));
  EXPECT_EQ(ours.substr(8, 8), w::Wire(kKey, 2, 3).seal(beat_of(2), 0, kPort).substr(8, 8));
  EXPECT_FALSE(w::Wire(kKey, 0, 3).open(theirs, kPort));
}

TEST(WatchDatagram, AnythingNotSealedWithTheKeyIsDropped) {
  w::Wire member(kKey, 1, 3), head(kKey, 0, 3);
  const std::string bytes = member.seal(beat_of(1), 0, kPort);
  EXPECT_TRUE(w::Wire(kKey, 0, 3).open(bytes, kPort));
  EXPECT_FALSE(w::Wire("ffffffffffffffffffffffffffffffff", 0, 3).open(bytes, kPort));  // another step
  // Any byte changed, header or body or tag.
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    std::string bad = bytes;
    bad[i] = static_cast<char>(bad[i] ^ 1);
    EXPECT_FALSE(w::Wire(kKey, 0, 3).open(bad, kPort)) << "byte " << i;
  }
  EXPECT_FALSE(head.open("", kPort));
  EXPECT_FALSE(head.open("not json", kPort));
  // The old clear-text form, key and all.
  EXPECT_FALSE(head.open("{\"v\":1,\"k\":\"" + kKey + "\",\"t\":\"end\",\"n\":0}", kPort));
  EXPECT_FALSE(head.open(std::string(w::kMaxDatagram + 1, '{'), kPort));
  EXPECT_FALSE(w::Wire("not a key", 0, 3).keyed());
}

TEST(WatchDatagram, ReplaysAndOvertakenDatagramsAreDropped) {
  w::Wire member(kKey, 1, 3), head(kKey, 0, 3);
  const std::string first = member.seal(beat_of(1), 0, kPort);
  const std::string second = member.seal(beat_of(1), 0, kPort);
  EXPECT_TRUE(head.open(second, kPort));
  EXPECT_FALSE(head.open(second, kPort));  // replayed
  EXPECT_FALSE(head.open(first, kPort));   // older than the last accepted
  // Counters are per sender: node 2's first is fine.
  w::Wire other(kKey, 2, 3);
  EXPECT_TRUE(head.open(other.seal(beat_of(2), 0, kPort), kPort));
}

TEST(WatchDatagram, OnlyTheAddresseeFromAnAllowedSenderOpensIt) {
  w::Wire head(kKey, 0, 3), one(kKey, 1, 3), two(kKey, 2, 3);
  w::Datagram end;
  end.type = w::Datagram::Type::End;
  // The head's end to node 1, replayed to node 2, or back to the head: dropped.
  const std::string to_one = head.seal(end, 1, kPort);
  EXPECT_FALSE(two.open(to_one, kPort));
  EXPECT_FALSE(w::Wire(kKey, 0, 3).open(to_one, kPort));
  ASSERT_TRUE(one.open(to_one, kPort));
  EXPECT_EQ(one.open(head.seal(end, 1, kPort), kPort)->type, w::Datagram::Type::End);
  // A member hears only the head, never another member (nor one past the step's nodes).
  EXPECT_FALSE(two.open(one.seal(end, 2, kPort), kPort));
  EXPECT_FALSE(w::Wire(kKey, 0, 3).open(w::Wire(kKey, 5, 9).seal(end, 0, kPort), kPort));
}

// Someone who holds a port the members send to (a candidate the head skipped) relays what they
// get to the head, or the head's answers back from their port: the head's port in the sealed
// header no longer matches, and the datagram is refused.
TEST(WatchDatagram, ADatagramRelayedFromAnotherPortIsRefused) {
  w::Wire member(kKey, 1, 2), head(kKey, 0, 2);
  const std::string to_squatter = member.seal(beat_of(1), 0, kPort + 1);  // the copy for another candidate
  EXPECT_FALSE(head.open(to_squatter, kPort));
  const std::string answer = head.seal(beat_of(0), 1, kPort);
  EXPECT_FALSE(member.open(answer, kPort + 1));  // came from the squatter's port
  EXPECT_TRUE(member.open(answer, kPort));
}

// Every node seals under the step's one key: two nodes that drew the same session must still
// never share a nonce (the sender's index is in it), or the keystream would repeat.
TEST(WatchDatagram, TwoSendersNeverShareANonce) {
  const w::Wire::Session same = {'s', 'a', 'm', 'e'};
  w::Wire one(kKey, 1, 3, same), two(kKey, 2, 3, same);
  const std::string a = one.seal(beat_of(1), 0, kPort), b = two.seal(beat_of(1), 0, kPort);
  // Same body, same counter: were the nonces equal, so would the ciphertexts be (the tags differ
  // anyway: the headers they cover name different senders).
  ASSERT_EQ(a.size(), b.size());
  const std::size_t body = a.size() - w::kSealHeader - w::kSealTag;
  EXPECT_NE(a.substr(w::kSealHeader, body), b.substr(w::kSealHeader, body));
}

TEST(WatchDatagram, HugeOrBinaryMessagesAreCutToFit) {
  w::Datagram d;
  d.type = w::Datagram::Type::Fail;
  d.failure.error = std::string(100000, '\x01') + "\xff\xfe";
  d.failure.where = std::string(5000, 'x');
  d.failure.host = std::string(5000, 'h');
  w::Wire member(kKey, 1, 2), head(kKey, 0, 2);
  const std::string bytes = member.seal(d, 0, kPort);
  EXPECT_LE(bytes.size(), w::kMaxDatagram);
  const auto back = head.open(bytes, kPort);
  ASSERT_TRUE(back);
  EXPECT_LE(back->failure.where.size(), 240u);
}

// Numbers that are not the field's type (a float, a negative id, one past its range) are refused,
// not cast (found by tests/fuzz/fuzz_datagram: a cast of 1.1e49 to long is undefined).
TEST(WatchDatagram, NumbersOfTheWrongKindAreRefusedNotCast) {
  const std::string fail = R"({"v":2,"t":"fail","n":1,"id":3,"c":{},"f":{"how":"signal","rank":2,"node":1,"code":9,"at":AT}})";
  const auto with = [&](const std::string& at) { return fail.substr(0, fail.find("AT")) + at + "}}"; };
  EXPECT_TRUE(w::decode_body(with("1700000000")));
  EXPECT_FALSE(w::decode_body(with("1.1e49")));
  EXPECT_FALSE(w::decode_body(with("1.5")));
  EXPECT_FALSE(w::decode_body(with("99999999999999999999")));
  EXPECT_FALSE(w::decode_body(R"({"v":2,"t":"ack","n":1,"id":-1})"));
  EXPECT_FALSE(w::decode_body(R"({"v":2,"t":"ack","n":4294967296,"id":1})"));
}

TEST(WatchDatagram, KeysAreThirtyTwoLowercaseHexDigits) {
  EXPECT_TRUE(w::valid_key(kKey));
  EXPECT_FALSE(w::valid_key(""));
  EXPECT_FALSE(w::valid_key("0123456789ABCDEF0123456789abcdef"));
  EXPECT_FALSE(w::valid_key(kKey + "0"));
  const auto raw = w::key_bytes(kKey);
  ASSERT_TRUE(raw);
  ASSERT_EQ(raw->size(), 16u);
  EXPECT_EQ(static_cast<unsigned char>((*raw)[0]), 0x01);
  EXPECT_EQ(static_cast<unsigned char>((*raw)[15]), 0xef);
}
