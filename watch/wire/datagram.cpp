#include "datagram.hpp"

#include <openssl/crypto.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <type_traits>
#include <nlohmann/json.hpp>

namespace ddp::watch {
namespace {

using json = nlohmann::json;

constexpr int kVersion = 2;
constexpr std::size_t kMaxBody = kMaxDatagram - kSealHeader - kSealTag;
constexpr char kMagic[4] = {'D', 'D', 'P', 'W'};
constexpr unsigned char kSealVersion = 2;
constexpr std::size_t kMaxHost = 64;
constexpr std::size_t kMaxRanks = 96;
constexpr std::size_t kMaxWhere = 240;
constexpr std::size_t kMaxError = 480;
constexpr std::size_t kMaxCounts = 8;
constexpr std::size_t kMaxHow = 40;

const char* type_name(Datagram::Type t) {
  switch (t) {
    case Datagram::Type::Beat: return "beat";
    case Datagram::Type::Fail: return "fail";
    case Datagram::Type::Done: return "done";
    case Datagram::Type::Ack: return "ack";
    case Datagram::Type::End: return "end";
    case Datagram::Type::Bye: return "bye";
  }
  return "";
}

std::optional<Datagram::Type> type_of(const std::string& name) {
  for (auto t : {Datagram::Type::Beat, Datagram::Type::Fail, Datagram::Type::Done,
                 Datagram::Type::Ack, Datagram::Type::End, Datagram::Type::Bye})
    if (name == type_name(t)) return t;
  return std::nullopt;
}

const char* how_name(How h) {
  switch (h) {
    case How::Exit: return "exit";
    case How::Signal: return "signal";
    case How::Stopped: return "stopped";
    case How::Hung: return "hung";
    case How::Silent: return "silent";
  }
  return "";
}

std::optional<How> how_of(const std::string& name) {
  for (auto h : {How::Exit, How::Signal, How::Stopped, How::Hung, How::Silent})
    if (name == how_name(h)) return h;
  return std::nullopt;
}

std::string cut(const std::string& s, std::size_t max) { return s.size() <= max ? s : s.substr(0, max); }

json failure_json(const Failure& f, std::size_t max_error) {
  return {{"how", how_name(f.how)}, {"rank", f.rank},          {"node", f.node},
          {"host", cut(f.host, kMaxHost)}, {"ranks", cut(f.ranks, kMaxRanks)},
          {"code", f.code},         {"at", f.at_ns},           {"s", f.seconds},
          {"err", cut(f.error, max_error)}, {"where", cut(f.where, kMaxWhere)}};
}

template <class T>
bool get(const json& j, const char* name, T& out) {
  const auto it = j.find(name);
  if (it == j.end()) return false;
  // A number the sender wrote as a float or out of T's range is not T: nlohmann would convert it
  // with a cast whose result is undefined (found by tests/fuzz/fuzz_datagram).
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    if (it->is_number_unsigned()) {
      const auto v = it->get<std::uint64_t>();
      if (v > static_cast<std::uint64_t>(std::numeric_limits<T>::max())) return false;
      out = static_cast<T>(v);
      return true;
    }
    if (!it->is_number_integer()) return false;
    const auto v = it->get<std::int64_t>();
    if (v < static_cast<std::int64_t>(std::numeric_limits<T>::min()) ||
        (v > 0 && static_cast<std::uint64_t>(v) > static_cast<std::uint64_t>(std::numeric_limits<T>::max())))
      return false;
    out = static_cast<T>(v);
    return true;
  }
  try {
    out = it->get<T>();
    return true;
  } catch (const json::exception&) {
    return false;
  }
}

void put32(char* p, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<char>(v >> (8 * i));
}
void put64(char* p, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<char>(v >> (8 * i));
}
std::uint64_t get_le(const char* p, int bytes) {
  std::uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

}  // namespace

std::string encode_body(const Datagram& d) {
  json j = {{"v", kVersion}, {"t", type_name(d.type)}, {"n", d.node}};
  switch (d.type) {
    case Datagram::Type::Beat:
      if (!d.host.empty()) j["h"] = cut(d.host, kMaxHost);
      if (!d.ranks.empty()) j["r"] = cut(d.ranks, kMaxRanks);
      if (d.sent_ns != 0) j["ts"] = d.sent_ns;
      if (d.echo_ns != 0) j["te"] = d.echo_ns;
      if (d.heard_ns != 0) j["th"] = d.heard_ns;
      break;
    case Datagram::Type::Fail: {
      // A few kinds at most in practice; a bounded number whatever comes.
      json counts = json::object();
      for (const auto& [how, n] : d.counts)
        if (counts.size() < kMaxCounts) counts[cut(how, kMaxHow)] = n;
      j["c"] = std::move(counts);
    }
      [[fallthrough]];
    case Datagram::Type::Done:
    case Datagram::Type::Ack:
      j["id"] = d.id;
      break;
    default:
      break;
  }
  // A message from another program's exception may be anything: invalid UTF-8 is replaced, and
  // escapes may grow it, so it is cut until the datagram fits.
  for (std::size_t max_error = kMaxError;; max_error /= 2) {
    if (d.type == Datagram::Type::Fail) j["f"] = failure_json(d.failure, max_error);
    std::string out = j.dump(-1, ' ', false, json::error_handler_t::replace);
    if (out.size() <= kMaxBody || max_error == 0) return out;
  }
}

std::optional<Datagram> decode_body(std::string_view bytes) {
  if (bytes.size() > kMaxBody || bytes.empty() || bytes.front() != '{') return std::nullopt;
  const json j = json::parse(bytes.begin(), bytes.end(), nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return std::nullopt;
  int version = 0;
  std::string t;
  if (!get(j, "v", version) || version != kVersion || !get(j, "t", t))
    return std::nullopt;
  const auto type = type_of(t);
  if (!type) return std::nullopt;
  Datagram d;
  d.type = *type;
  if (!get(j, "n", d.node)) return std::nullopt;
  (void)get(j, "h", d.host);
  (void)get(j, "r", d.ranks);
  if (d.type == Datagram::Type::Beat) {
    (void)get(j, "ts", d.sent_ns);
    (void)get(j, "te", d.echo_ns);
    (void)get(j, "th", d.heard_ns);
  }
  if ((d.type == Datagram::Type::Fail || d.type == Datagram::Type::Done ||
       d.type == Datagram::Type::Ack) &&
      !get(j, "id", d.id))
    return std::nullopt;
  if (d.type == Datagram::Type::Fail) {
    const auto f = j.find("f");
    if (f == j.end() || !f->is_object()) return std::nullopt;
    std::string how;
    Failure& x = d.failure;
    if (!get(*f, "how", how) || !how_of(how) || !get(*f, "rank", x.rank) ||
        !get(*f, "node", x.node) || !get(*f, "code", x.code) || !get(*f, "at", x.at_ns))
      return std::nullopt;
    x.how = *how_of(how);
    if (const auto c = j.find("c"); c != j.end() && c->is_object() && c->size() <= kMaxCounts)
      for (auto it = c->begin(); it != c->end(); ++it)
        if (it->is_number_unsigned()) d.counts[it.key()] = it->get<unsigned>();
    (void)get(*f, "host", x.host);
    (void)get(*f, "ranks", x.ranks);
    (void)get(*f, "s", x.seconds);
    (void)get(*f, "err", x.error);
    (void)get(*f, "where", x.where);
  }
  return d;
}

std::optional<std::string> key_bytes(std::string_view hex) {
  if (!valid_key(hex)) return std::nullopt;
  return seal::from_hex(hex);
}

std::vector<std::uint16_t> head_ports(std::string_view key_hex, const plan::PortRange& range) {
  std::vector<std::uint16_t> ports;
  const auto key = key_bytes(key_hex);
  if (!key || range.size() == 0) return ports;
  for (unsigned k = 0; ports.size() < std::min<unsigned>(kHeadPorts, range.size()); ++k) {
    const auto h = seal::derive(*key, "slurm-ddp watch port " + std::to_string(k));
    const std::uint32_t x = std::uint32_t{h[0]} << 24 | std::uint32_t{h[1]} << 16 | std::uint32_t{h[2]} << 8 | h[3];
    const auto port = static_cast<std::uint16_t>(range.low + x % range.size());
    if (std::find(ports.begin(), ports.end(), port) == ports.end()) ports.push_back(port);
  }
  return ports;
}

Wire::Wire(std::string_view key_hex, unsigned me, unsigned nodes, std::optional<Session> session)
    : me_(me), nodes_(nodes), last_(me == 0 ? nodes : 1, 0) {
  const auto key = key_bytes(key_hex);
  if (!key) return;
  aead_ = std::make_unique<seal::Aead>(seal::derive(*key, "slurm-ddp watch datagrams v2"));
  const auto tag = seal::derive(*key, "slurm-ddp watch step tag");
  std::memcpy(step_tag_.data(), tag.data(), step_tag_.size());
  if (session) {
    session_ = *session;
    return;
  }
  const auto drawn = seal::random_nonce();
  std::memcpy(session_.data(), drawn.data(), session_.size());
}

namespace {

// from | session | the counter's low 32 bits (see the header comment).
seal::Nonce nonce_of(const char* header) {
  seal::Nonce n{};
  std::memcpy(n.data(), header + 16, 4);
  std::memcpy(n.data() + 4, header + 24, 4);
  std::memcpy(n.data() + 8, header + 28, 4);
  return n;
}

}  // namespace

std::string Wire::seal(const Datagram& d, unsigned to, std::uint16_t head_port) {
  if (!aead_) return {};
  // The low 32 bits of the counter go into the nonce: they may wrap only under a new session.
  if ((++counter_ & 0xffffffffu) == 0) {
    const auto session = seal::random_nonce();
    std::memcpy(session_.data(), session.data(), session_.size());
  }
  const std::string body = encode_body(d);
  std::string header(kSealHeader, '\0');
  std::memcpy(header.data(), kMagic, sizeof kMagic);
  header[4] = static_cast<char>(kSealVersion);
  header[6] = static_cast<char>(head_port & 0xff);
  header[7] = static_cast<char>(head_port >> 8);
  std::memcpy(header.data() + 8, step_tag_.data(), step_tag_.size());
  put32(header.data() + 16, me_);
  put32(header.data() + 20, to);
  std::memcpy(header.data() + 24, session_.data(), session_.size());
  put64(header.data() + 28, counter_);
  return header + aead_->seal(nonce_of(header.data()), header, body);
}

std::optional<Datagram> Wire::open(std::string_view bytes, std::uint16_t head_port) {
  if (!aead_ || bytes.size() < kSealHeader + 2 + kSealTag || bytes.size() > kMaxDatagram) return std::nullopt;
  const char* p = bytes.data();
  if (std::memcmp(p, kMagic, sizeof kMagic) != 0 || static_cast<unsigned char>(p[4]) != kSealVersion ||
      get_le(p + 6, 2) != head_port || CRYPTO_memcmp(p + 8, step_tag_.data(), step_tag_.size()) != 0)
    return std::nullopt;
  const auto from = static_cast<std::uint32_t>(get_le(p + 16, 4));
  const auto to = static_cast<std::uint32_t>(get_le(p + 20, 4));
  if (to != me_ || from >= nodes_ || from == me_ || (me_ != 0 && from != 0)) return std::nullopt;
  const std::uint64_t counter = get_le(p + 28, 8);
  std::uint64_t& last = last_[me_ == 0 ? from : 0];
  if (counter <= last) return std::nullopt;
  const auto body = aead_->open(nonce_of(p), bytes.substr(0, kSealHeader), bytes.substr(kSealHeader));
  if (!body) return std::nullopt;
  auto d = decode_body(*body);
  if (!d) return std::nullopt;
  last = counter;
  d->node = from;
  return d;
}

}  // namespace ddp::watch
