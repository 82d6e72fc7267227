#include "record.hpp"

#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>
#include <vector>

#include "error.hpp"
#include "parse.hpp"

namespace ddp::monitor {
namespace {

using plan::PlanError;
using plan::quoted;

// Decimal with up to `digits` fractional digits, without trailing zeros: "87", "291.5".
std::string number(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  std::string s = buf;
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s == "-0" ? "0" : s;
}

// Values never hold whitespace or '=': a name's spaces become '_'.
std::string token(const std::string& s) {
  std::string out = s.empty() ? "-" : s;
  for (char& c : out)
    if (static_cast<unsigned char>(c) <= ' ' || c == '=' || c == 0x7f) c = '_';
  return out;
}

struct Fields {
  std::string kind;
  double time = 0;
  std::map<std::string, std::string> values;
  std::string rest;  // everything after TIME, for notes

  const std::string* find(const char* key) const {
    const auto it = values.find(key);
    return it == values.end() ? nullptr : &it->second;
  }
  const std::string& need(const char* key) const {
    if (const auto* v = find(key)) return *v;
    throw PlanError("a " + kind + " record without " + key + "=");
  }
  double real(const char* key) const { return to_real(key, need(key)); }
  std::optional<double> maybe_real(const char* key) const {
    if (const auto* v = find(key)) return to_real(key, *v);
    return std::nullopt;
  }
  std::uint64_t count(const char* key, std::uint64_t max) const {
    return plan::parse_unsigned(std::string(key), need(key), 0, max);
  }
  static double to_real(const char* key, const std::string& text) {
    std::size_t used = 0;
    double v = 0;
    try {
      v = std::stod(text, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != text.size() || text.empty() || !std::isfinite(v) || v < 0)
      throw PlanError(std::string(key) + "=" + quoted(text) + " is not a number");
    return v;
  }
};

Fields split(std::string_view line) {
  Fields f;
  std::istringstream in{std::string(line)};
  std::string time;
  if (!(in >> f.kind >> time)) throw PlanError("a record needs KIND and TIME");
  f.time = Fields::to_real("TIME", time);
  std::getline(in, f.rest);
  if (!f.rest.empty() && f.rest.front() == ' ') f.rest.erase(0, 1);
  std::istringstream words(f.rest);
  std::string word;
  while (words >> word) {
    const auto eq = word.find('=');
    if (eq == std::string::npos || eq == 0) continue;  // free text (notes), or a later format's
    f.values[word.substr(0, eq)] = word.substr(eq + 1);
  }
  return f;
}

constexpr std::uint64_t kMaxU32 = 0xffffffffu;
constexpr std::uint64_t kMaxBytes = ~std::uint64_t{0};

}  // namespace

std::string format_record(const Record& r) {
  std::ostringstream s;
  const std::string time = number(r.time, 3);
  std::visit(
      [&](const auto& b) {
        using T = std::decay_t<decltype(b)>;
        if constexpr (std::is_same_v<T, StartRecord>) {
          s << "start " << time << " job=" << b.job << " step=" << b.step
            << " node=" << token(b.node) << " node_index=" << b.node_index << " nodes=" << b.nodes
            << " interval=" << number(b.interval, 3) << " unix=" << number(b.unix_time, 3)
            << " pid=" << b.pid;
        } else if constexpr (std::is_same_v<T, GpuInfo>) {
          s << "gpu-info " << time << " gpu=" << b.gpu;
          if (!b.busid.empty()) s << " bus=" << token(b.busid);
          if (!b.name.empty()) s << " name=" << token(b.name);
          if (b.mem_total_mib) s << " mem_total_mib=" << number(*b.mem_total_mib, 0);
        } else if constexpr (std::is_same_v<T, TaskInfo>) {
          s << "task " << time << " rank=" << b.rank << " local=" << b.local << " pid=" << b.pid;
        } else if constexpr (std::is_same_v<T, GpuSample>) {
          s << "gpu " << time << " gpu=" << b.gpu;
          if (b.util) s << " util=" << number(*b.util, 0);
          if (b.mem_used_mib) s << " mem_used_mib=" << number(*b.mem_used_mib, 0);
          if (b.power_w) s << " power_w=" << number(*b.power_w, 1);
        } else if constexpr (std::is_same_v<T, CpuSample>) {
          s << "cpu " << time << " rank=" << b.rank << " cpu=" << number(b.cpu, 1);
        } else if constexpr (std::is_same_v<T, NetSample>) {
          s << (b.ib ? "ib " : "net ") << time << " nic=" << token(b.nic)
            << " rx_bytes=" << b.rx_bytes << " tx_bytes=" << b.tx_bytes;
        } else if constexpr (std::is_same_v<T, Note>) {
          std::string text = b.text;
          for (char& c : text)
            if (c == '\n' || c == '\r') c = ' ';
          s << "note " << time << " " << text;
        } else {
          s << "end " << time << " reason=" << token(b.reason);
        }
      },
      r.body);
  return s.str();
}

std::optional<Record> parse_record(std::string_view line) {
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
  const auto first = line.find_first_not_of(' ');
  if (first == std::string_view::npos || line[first] == '#') return std::nullopt;
  const Fields f = split(line);
  Record r;
  r.time = f.time;
  if (f.kind == "start") {
    StartRecord b;
    b.job = static_cast<std::uint32_t>(f.count("job", kMaxU32));
    b.step = static_cast<std::uint32_t>(f.count("step", kMaxU32));
    b.node = f.need("node");
    b.node_index = static_cast<unsigned>(f.count("node_index", 1u << 20));
    b.nodes = static_cast<unsigned>(f.count("nodes", 1u << 20));
    b.interval = f.real("interval");
    b.unix_time = f.real("unix");
    if (f.find("pid")) b.pid = static_cast<long>(f.count("pid", 0x7fffffffu));
    r.body = b;
  } else if (f.kind == "gpu-info") {
    GpuInfo b;
    b.gpu = static_cast<unsigned>(f.count("gpu", 1u << 16));
    if (const auto* v = f.find("bus")) b.busid = *v;
    if (const auto* v = f.find("name")) b.name = *v;
    b.mem_total_mib = f.maybe_real("mem_total_mib");
    r.body = b;
  } else if (f.kind == "task") {
    TaskInfo b;
    b.rank = static_cast<unsigned>(f.count("rank", kMaxU32));
    b.local = static_cast<unsigned>(f.count("local", kMaxU32));
    b.pid = static_cast<long>(f.count("pid", 0x7fffffffu));
    r.body = b;
  } else if (f.kind == "gpu") {
    GpuSample b;
    b.gpu = static_cast<unsigned>(f.count("gpu", 1u << 16));
    b.util = f.maybe_real("util");
    b.mem_used_mib = f.maybe_real("mem_used_mib");
    b.power_w = f.maybe_real("power_w");
    r.body = b;
  } else if (f.kind == "cpu") {
    CpuSample b;
    b.rank = static_cast<unsigned>(f.count("rank", kMaxU32));
    b.cpu = f.real("cpu");
    r.body = b;
  } else if (f.kind == "net" || f.kind == "ib") {
    NetSample b;
    b.ib = f.kind == "ib";
    b.nic = f.need("nic");
    b.rx_bytes = f.count("rx_bytes", kMaxBytes);
    b.tx_bytes = f.count("tx_bytes", kMaxBytes);
    r.body = b;
  } else if (f.kind == "note") {
    r.body = Note{f.rest};
  } else if (f.kind == "end") {
    const auto* reason = f.find("reason");
    r.body = EndRecord{reason ? *reason : ""};
  } else {
    return std::nullopt;
  }
  return r;
}

}  // namespace ddp::monitor
