#include "beat_wire.hpp"

#include <algorithm>
#include <cstring>

namespace ddp::detail {
namespace {

constexpr char kMagic[4] = {'D', 'D', 'P', 'B'};
constexpr std::uint8_t kVersion = 1;
constexpr std::uint8_t kBeatKind = 1, kAnswerKind = 2;
constexpr std::size_t kHeader = 4 + 1 + 1 + 1 + 1 + 8 + 4 + 4;  // to the world, in both kinds
constexpr std::size_t kBeatFixed = kHeader + 8 + 8 + 1;
constexpr std::size_t kAnswerFixed = kHeader + 8 + 8 + 8 + 2;

void put(std::string& out, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

std::uint64_t take(std::string_view in, std::size_t at, int bytes) {
  std::uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= std::uint64_t{static_cast<unsigned char>(in[at + i])} << (8 * i);
  return v;
}

void header(std::string& out, std::uint8_t kind, RankState state, std::uint8_t flags, std::uint64_t token,
            std::uint32_t rank, std::uint32_t world) {
  out.append(kMagic, sizeof kMagic);
  put(out, kVersion, 1);
  put(out, kind, 1);
  put(out, static_cast<std::uint8_t>(state), 1);
  put(out, flags, 1);
  put(out, token, 8);
  put(out, rank, 4);
  put(out, world, 4);
}

// The header's checks, shared by both kinds: this job's, of this kind, a known state, a rank of it.
bool header_ok(std::string_view in, std::size_t fixed, std::uint8_t kind, std::uint64_t token, std::uint32_t world) {
  return in.size() >= fixed && in.size() <= kMaxHeartbeatDatagram && std::memcmp(in.data(), kMagic, 4) == 0 &&
         take(in, 4, 1) == kVersion && take(in, 5, 1) == kind && take(in, 6, 1) <= static_cast<int>(RankState::Done) &&
         take(in, 8, 8) == token && take(in, 20, 4) == world && take(in, 16, 4) < world;
}

}  // namespace

std::string encode(const Beat& b) {
  const std::size_t host = std::min(b.host.size(), kMaxBeatHost);
  std::string out;
  out.reserve(kBeatFixed + host);
  header(out, kBeatKind, b.state, b.heard_verdict ? 1 : 0, b.token, b.rank, b.world);
  put(out, b.census, 8);
  put(out, b.wants, 8);
  put(out, host, 1);
  out.append(b.host, 0, host);
  return out;
}

std::string encode(const BeatAnswer& a) {
  const std::size_t verdict = std::min(a.verdict.size(), kMaxHeartbeatDatagram - kAnswerFixed);
  std::string out;
  out.reserve(kAnswerFixed + verdict);
  header(out, kAnswerKind, a.recorded, a.census_open ? 1 : 0, a.token, a.rank, a.world);
  put(out, a.census, 8);
  put(out, a.clear, 8);
  put(out, a.counted, 8);
  put(out, verdict, 2);
  out.append(a.verdict, 0, verdict);
  return out;
}

std::optional<Beat> decode_beat(std::string_view in, std::uint64_t token, std::uint32_t world) {
  if (!header_ok(in, kBeatFixed, kBeatKind, token, world) || take(in, 7, 1) > 1) return std::nullopt;
  const std::size_t host = take(in, kHeader + 16, 1);
  if (host > kMaxBeatHost || in.size() != kBeatFixed + host) return std::nullopt;
  Beat b;
  b.token = token;
  b.world = world;
  b.rank = static_cast<std::uint32_t>(take(in, 16, 4));
  b.state = static_cast<RankState>(take(in, 6, 1));
  b.heard_verdict = take(in, 7, 1) == 1;
  b.census = take(in, kHeader, 8);
  b.wants = take(in, kHeader + 8, 8);
  b.host.assign(in.substr(kBeatFixed, host));
  return b;
}

std::optional<BeatAnswer> decode_answer(std::string_view in, std::uint64_t token, std::uint32_t world,
                                        std::uint32_t rank) {
  if (!header_ok(in, kAnswerFixed, kAnswerKind, token, world) || take(in, 7, 1) > 1 || take(in, 16, 4) != rank)
    return std::nullopt;
  const std::size_t verdict = take(in, kHeader + 24, 2);
  if (in.size() != kAnswerFixed + verdict) return std::nullopt;
  BeatAnswer a;
  a.token = token;
  a.world = world;
  a.rank = rank;
  a.recorded = static_cast<RankState>(take(in, 6, 1));
  a.census_open = take(in, 7, 1) == 1;
  a.census = take(in, kHeader, 8);
  a.clear = take(in, kHeader + 8, 8);
  a.counted = take(in, kHeader + 16, 8);
  a.verdict.assign(in.substr(kAnswerFixed, verdict));
  return a;
}

}  // namespace ddp::detail
