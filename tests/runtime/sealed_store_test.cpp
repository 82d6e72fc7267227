// What another user connected to MASTER_PORT can do to a step whose ranks seal their values: read
// nothing, forge nothing, move nothing; what they overwrite ends the step naming tampering.
#include "sealed_store.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include "ddp/error.hpp"
#include "free_port.hpp"
#include "seal.hpp"
#include "torch_compat.hpp"

using namespace std::chrono_literals;
using ddp::detail::SealedStore;

namespace {

const std::string kSecret(32, '\x5a');
const std::string kOtherSecret(32, '\x5b');

std::vector<std::uint8_t> sealed_value(const std::string& s) { return {s.begin(), s.end()}; }
std::string opened_text(const std::vector<std::uint8_t>& v) { return {v.begin(), v.end()}; }

// Rank 0's store, and connections to it: the step's own, sealed, and a stranger's, raw.
struct RankZeroStore {
  int port = ddp::test::free_port();
  c10::intrusive_ptr<c10d::Store> server = connect(true);

  c10::intrusive_ptr<c10d::Store> connect(bool server_side) const {
    c10d::TCPStoreOptions o;
    o.port = static_cast<std::uint16_t>(port);
    o.isServer = server_side;
    o.waitWorkers = false;
    o.timeout = 2s;
    return ddp::compat::make_tcp_store("127.0.0.1", o);
  }
  c10::intrusive_ptr<c10d::Store> rank(const std::string& secret = kSecret, const std::string& generation = "0") const {
    return c10::make_intrusive<SealedStore>(connect(false), secret, generation, "127.0.0.1:" + std::to_string(port));
  }
};

std::string tamper_error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ddp::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(SealedStore, RanksOfTheStepReadWhatTheyWrote) {
  RankZeroStore s;
  auto a = s.rank(), b = s.rank();
  a->set("ddp/verdict", sealed_value("met all"));
  EXPECT_EQ(opened_text(b->get("ddp/verdict")), "met all");
  b->set("empty", std::vector<uint8_t>{});  // 2.x also has set(key, std::string)
  EXPECT_EQ(opened_text(a->get("empty")), "");
  // Counters are the store's own, as a TCPStore's.
  EXPECT_EQ(a->add("ddp/arrivals", 1), 1);
  EXPECT_EQ(b->add("ddp/arrivals", 1), 2);
  EXPECT_TRUE(a->check({"ddp/verdict"}));
  b->wait({"ddp/verdict"}, 1s);
}

TEST(SealedStore, AStrangerReadsNeitherTheValueNorItsLength) {
  RankZeroStore s;
  auto stranger = s.connect(false);
  s.rank()->set("ddp/heartbeat/0", sealed_value("41234 9876543210 n1"));
  const std::string seen = opened_text(stranger->get("ddp/heartbeat/0"));
  EXPECT_EQ(seen.find("9876543210"), std::string::npos);
  EXPECT_EQ(seen.find("n1"), std::string::npos);
  EXPECT_EQ(seen.rfind("DDS1", 0), 0u);
}

TEST(SealedStore, AForgedOverwrittenOrMovedValueEndsTheStepNamingTampering) {
  RankZeroStore s;
  auto rank = s.rank(), stranger = s.connect(false);
  // Forged: a failed check of the preflight's, as another user would write it.
  stranger->set("ddp/to0/1/3", sealed_value("{\"checks\":[{\"status\":\"failed\"}]}"));
  const std::string forged = tamper_error_of([&] { rank->get("ddp/to0/1/3"); });
  EXPECT_NE(forged.find("that no rank of this step wrote"), std::string::npos) << forged;
  EXPECT_NE(forged.find("(tampering)"), std::string::npos) << forged;
  EXPECT_NE(forged.find("nothing is retried, requeued or excluded"), std::string::npos) << forged;
  // Overwritten a moment after the genuine write.
  rank->set("ddp/verdict", sealed_value("met"));
  stranger->set("ddp/verdict", sealed_value("failed rank 3 never arrived"));
  EXPECT_NE(tamper_error_of([&] { rank->get("ddp/verdict"); }).find("(tampering)"), std::string::npos);
  // A genuine value copied to another key, or kept from another attempt of the job, or of
  // another step (another secret).
  rank->set("ddp/to0/1/0", sealed_value("rank 0's report"));
  stranger->set("ddp/to0/1/1", stranger->get("ddp/to0/1/0"));
  EXPECT_NE(tamper_error_of([&] { rank->get("ddp/to0/1/1"); }).find("(tampering)"), std::string::npos);
  s.rank(kSecret, "1")->set("ddp/view/1", sealed_value("a view"));
  EXPECT_NE(tamper_error_of([&] { rank->get("ddp/view/1"); }).find("(tampering)"), std::string::npos);
  // ddp-preflight's rendezvous, on the same port with the same secret just before the program's.
  s.rank(kSecret, "0/preflight")->set("ddp/verdict", sealed_value("met"));
  const auto program = s.rank(kSecret, "0/");
  EXPECT_NE(tamper_error_of([&] { program->get("ddp/verdict"); }).find("(tampering)"), std::string::npos);
  // Another step's ranks on the same port (a collision of derived ports) are told apart.
  s.rank(kOtherSecret)->set("ddp/view/2", sealed_value("a view"));
  const std::string collision = tamper_error_of([&] { rank->get("ddp/view/2"); });
  EXPECT_NE(collision.find("sealed with another step's key or under another name, so another step's ranks use this MASTER_PORT"),
            std::string::npos) << collision;
  EXPECT_NE(collision.find("MpiParams=ports="), std::string::npos) << collision;
  // A bit flipped anywhere.
  rank->set("k", sealed_value("value"));
  auto raw = stranger->get("k");
  for (std::size_t i = 0; i < raw.size(); ++i) {
    auto bad = raw;
    bad[i] ^= 1;
    stranger->set("k", bad);
    EXPECT_NE(tamper_error_of([&] { rank->get("k"); }).find("(tampering)"), std::string::npos) << "byte " << i;
  }
}

TEST(SealedStore, CompareSetFollowsTheStoresRuleOnTheValuesAsWritten) {
  RankZeroStore s;
  auto a = s.rank(), b = s.rank();
  // Absent and nothing expected: set.
  EXPECT_EQ(opened_text(a->compareSet("c", {}, sealed_value("one"))), "one");
  // Present and something else expected: the value stays, and comes back.
  EXPECT_EQ(opened_text(b->compareSet("c", sealed_value("two"), sealed_value("three"))), "one");
  // Present and expected: replaced.
  EXPECT_EQ(opened_text(b->compareSet("c", sealed_value("one"), sealed_value("two"))), "two");
  EXPECT_EQ(opened_text(a->get("c")), "two");
  // Absent and something expected: nothing set, the expected value comes back.
  EXPECT_EQ(opened_text(a->compareSet("absent", sealed_value("x"), sealed_value("y"))), "x");
  EXPECT_FALSE(a->check({"absent"}));
}

TEST(SealedStore, ItsTimeOutIsTheConnectionsToo) {
  RankZeroStore s;
  auto rank = s.rank();
  rank->setTimeout(300ms);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_ANY_THROW(rank->get("never"));  // get() waits for the key for the store's time-out
  EXPECT_LT(std::chrono::steady_clock::now() - start, 1800ms);
}

TEST(Seal, DerivedKeysDifferPerUseAndHexRoundTrips) {
  EXPECT_NE(ddp::seal::derive(kSecret, "a"), ddp::seal::derive(kSecret, "b"));
  EXPECT_NE(ddp::seal::derive(kSecret, "a"), ddp::seal::derive(kOtherSecret, "a"));
  EXPECT_EQ(ddp::seal::from_hex(ddp::seal::to_hex("\x01\xff z")), std::string("\x01\xff z"));
  EXPECT_FALSE(ddp::seal::from_hex("abc"));
  EXPECT_FALSE(ddp::seal::from_hex("zz"));
  EXPECT_FALSE(ddp::seal::from_hex("AB"));  // lowercase, as srun writes it
}

// RFC 8439, 2.8.2: the AEAD test vector, so that the cipher is the one the name says.
TEST(Seal, ChaCha20Poly1305MatchesRfc8439) {
  const auto key_bytes = *ddp::seal::from_hex("808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f");
  ddp::seal::Key key{};
  std::copy(key_bytes.begin(), key_bytes.end(), key.begin());
  const auto nonce_bytes = *ddp::seal::from_hex("070000004041424344454647");
  ddp::seal::Nonce nonce{};
  std::copy(nonce_bytes.begin(), nonce_bytes.end(), nonce.begin());
  const std::string aad = *ddp::seal::from_hex("50515253c0c1c2c3c4c5c6c7");
  const std::string plain =
      "Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, "
      "sunscreen would be it.";
  ddp::seal::Aead aead(key);
  const std::string sealed = aead.seal(nonce, aad, plain);
  EXPECT_EQ(ddp::seal::to_hex(sealed.substr(0, 16)), "d31a8d34648e60db7b86afbc53ef7ec2");
  EXPECT_EQ(ddp::seal::to_hex(sealed.substr(sealed.size() - 16)), "1ae10b594f09e26a7e902ecbd0600691");
  EXPECT_EQ(aead.open(nonce, aad, sealed), plain);
  EXPECT_FALSE(aead.open(nonce, aad + "x", sealed));
}
