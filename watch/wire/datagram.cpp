#include "datagram.hpp"

#include <nlohmann/json.hpp>

namespace ddp::watch {
namespace {

using json = nlohmann::json;

constexpr int kVersion = 1;
constexpr std::size_t kMaxHost = 64;
constexpr std::size_t kMaxRanks = 96;
constexpr std::size_t kMaxWhere = 240;
constexpr std::size_t kMaxError = 480;

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

// Constant time, so that a stranger cannot find the key a byte at a time.
bool same_key(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (std::size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

template <class T>
bool get(const json& j, const char* name, T& out) {
  const auto it = j.find(name);
  if (it == j.end()) return false;
  try {
    out = it->get<T>();
    return true;
  } catch (const json::exception&) {
    return false;
  }
}

}  // namespace

std::string encode(const Datagram& d, std::string_view key) {
  json j = {{"v", kVersion}, {"k", std::string(key)}, {"t", type_name(d.type)}, {"n", d.node}};
  switch (d.type) {
    case Datagram::Type::Beat:
      if (!d.host.empty()) j["h"] = cut(d.host, kMaxHost);
      if (!d.ranks.empty()) j["r"] = cut(d.ranks, kMaxRanks);
      break;
    case Datagram::Type::Fail:
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
    if (out.size() <= kMaxDatagram || max_error == 0) return out;
  }
}

std::optional<Datagram> decode(std::string_view bytes, std::string_view key) {
  if (bytes.size() > kMaxDatagram || bytes.empty() || bytes.front() != '{') return std::nullopt;
  const json j = json::parse(bytes.begin(), bytes.end(), nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return std::nullopt;
  int version = 0;
  std::string k, t;
  if (!get(j, "v", version) || version != kVersion || !get(j, "k", k) || !same_key(k, key) ||
      !get(j, "t", t))
    return std::nullopt;
  const auto type = type_of(t);
  if (!type) return std::nullopt;
  Datagram d;
  d.type = *type;
  if (!get(j, "n", d.node)) return std::nullopt;
  (void)get(j, "h", d.host);
  (void)get(j, "r", d.ranks);
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
    (void)get(*f, "host", x.host);
    (void)get(*f, "ranks", x.ranks);
    (void)get(*f, "s", x.seconds);
    (void)get(*f, "err", x.error);
    (void)get(*f, "where", x.where);
  }
  return d;
}

}  // namespace ddp::watch
