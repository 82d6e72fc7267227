#include "record.hpp"

#include <array>
#include <cmath>
#include <string_view>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "error.hpp"

namespace ddp::monitor {
namespace {

using plan::PlanError;
using Json = nlohmann::ordered_json;  // keys in the order written: `kind` and `time` first

// Rounded to `digits` decimals; a whole number is written as one ("87", not "87.0").
Json rounded(double v, int digits) {
  const double scale = std::pow(10.0, digits);
  const double r = std::round(v * scale) / scale;
  if (r == std::floor(r) && std::fabs(r) < 9e15) return static_cast<std::int64_t>(r);
  return r;
}

// The keys this reader knows; any other is skipped.
enum Key : std::size_t {
  kKind, kTime, kFormatKey, kJob, kStep, kNode, kNodeIndex, kNodes, kInterval, kUnix, kPid, kGpu,
  kBus, kName, kMemTotal, kRank, kLocal, kUtil, kMemUsed, kPower, kCpu, kNic, kRx, kTx, kText,
  kReason, kKeys
};
constexpr const char* kKeyNames[kKeys] = {
    "kind", "time", "format", "job", "step", "node", "node_index", "nodes", "interval",
    "unix", "pid", "gpu", "bus", "name", "mem_total_mib", "rank", "local", "util",
    "mem_used_mib", "power_w", "cpu", "nic", "rx_bytes", "tx_bytes", "text", "reason"};

std::optional<Key> key_of(const std::string& name) {
  static const std::unordered_map<std::string_view, Key> keys = [] {
    std::unordered_map<std::string_view, Key> m;
    for (std::size_t k = 0; k < kKeys; ++k) m.emplace(kKeyNames[k], static_cast<Key>(k));
    return m;
  }();
  const auto it = keys.find(name);
  if (it == keys.end()) return std::nullopt;
  return it->second;
}

// One top-level value of a record. Nested values are not part of this format: a later one may
// add them, so they are skipped, not refused.
struct Value {
  enum class Type { Absent, Number, Text, Other } type = Type::Absent;
  double number = 0;
  std::optional<std::uint64_t> count;  // the number, when it is a whole one that fits
  std::string text;
};

// nlohmann's SAX interface: each known key's value lands in its slot without building a JSON
// document, which is what makes reading 1,000 nodes' files affordable.
class Fields {
 public:
  using json = nlohmann::json;

  std::string error;

  bool null() { return put(Value::Type::Other); }
  bool boolean(bool) { return put(Value::Type::Other); }
  bool number_integer(json::number_integer_t v) {
    return put_number(static_cast<double>(v), v >= 0 ? std::optional<std::uint64_t>(v) : std::nullopt);
  }
  bool number_unsigned(json::number_unsigned_t v) { return put_number(static_cast<double>(v), v); }
  bool number_float(json::number_float_t v, const json::string_t&) {
    return put_number(v, std::nullopt);
  }
  bool string(json::string_t& v) {
    if (depth_ == 0) return fail("a record is a JSON object");
    if (Value* x = slot()) {
      x->type = Value::Type::Text;
      x->text = std::move(v);
    }
    return true;
  }
  bool binary(json::binary_t&) { return put(Value::Type::Other); }
  bool start_object(std::size_t) {
    if (depth_ == 0 && seen_object_) return fail("more than one object on the line");
    if (depth_ == 0) seen_object_ = true;
    if (depth_ == 1) put(Value::Type::Other);
    ++depth_;
    return true;
  }
  bool end_object() {
    --depth_;
    return true;
  }
  bool start_array(std::size_t) {
    if (depth_ == 0) return fail("a record is a JSON object, not an array");
    if (depth_ == 1) put(Value::Type::Other);
    ++depth_;
    return true;
  }
  bool end_array() {
    --depth_;
    return true;
  }
  bool key(json::string_t& k) {
    if (depth_ == 1) key_ = key_of(k);
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) {
    // "[json.exception.parse_error.101] parse error at line 1, column 5: ..." -> from "column".
    std::string what = e.what();
    const auto at = what.find("column");
    return fail("not JSON: " + (at == std::string::npos ? what : what.substr(at)));
  }

  const Value* find(Key key) const {
    return values_[key].type == Value::Type::Absent ? nullptr : &values_[key];
  }

 private:
  // The slot of the key just read, when it is a known key of the record itself.
  Value* slot() { return depth_ == 1 && key_ ? &values_[*key_] : nullptr; }
  bool put(Value::Type type) {
    if (depth_ == 0) return fail("a record is a JSON object");
    if (Value* x = slot()) *x = Value{type, 0, std::nullopt, {}};
    return true;
  }
  bool put_number(double v, std::optional<std::uint64_t> count) {
    if (depth_ == 0) return fail("a record is a JSON object");
    if (Value* x = slot()) *x = Value{Value::Type::Number, v, count, {}};
    return true;
  }
  bool fail(std::string why) {
    if (error.empty()) error = std::move(why);
    return false;
  }
  std::array<Value, kKeys> values_;
  int depth_ = 0;
  bool seen_object_ = false;
  std::optional<Key> key_;
};

// The typed view of one record's fields; every error names the kind and the key.
struct Reader {
  const Fields& f;
  std::string kind;

  const Value& need(Key key) const {
    if (const Value* v = f.find(key)) return *v;
    throw PlanError("a " + kind + " record without \"" + kKeyNames[key] + "\"");
  }
  double real(Key key) const { return real_of(key, need(key)); }
  std::optional<double> maybe_real(Key key) const {
    if (const Value* v = f.find(key)) return real_of(key, *v);
    return std::nullopt;
  }
  std::uint64_t count(Key key, std::uint64_t max) const {
    const Value& v = need(key);
    if (v.type != Value::Type::Number || !v.count || *v.count > max)
      throw PlanError("a " + kind + " record's \"" + kKeyNames[key] +
                      "\" is not a whole number from 0 to " + std::to_string(max));
    return *v.count;
  }
  std::string text(Key key) const {
    const Value& v = need(key);
    if (v.type != Value::Type::Text)
      throw PlanError("a " + kind + " record's \"" + kKeyNames[key] + "\" is not a string");
    return v.text;
  }
  std::string maybe_text(Key key) const { return f.find(key) ? text(key) : std::string(); }

 private:
  double real_of(Key key, const Value& v) const {
    if (v.type != Value::Type::Number || !std::isfinite(v.number) || v.number < 0)
      throw PlanError("a " + kind + " record's \"" + kKeyNames[key] +
                      "\" is not a number of 0 or more");
    return v.number;
  }
};

constexpr std::uint64_t kMaxU32 = 0xffffffffu;
constexpr std::uint64_t kMaxPid = 0x7fffffffu;
constexpr std::uint64_t kMaxBytes = ~std::uint64_t{0};

}  // namespace

std::string format_record(const Record& r) {
  Json j;
  std::visit(
      [&](const auto& b) {
        using T = std::decay_t<decltype(b)>;
        const auto head = [&](const char* kind) {
          j["kind"] = kind;
          j["time"] = rounded(r.time, 3);
        };
        if constexpr (std::is_same_v<T, StartRecord>) {
          head("start");
          j["format"] = kFormat;
          j["job"] = b.job;
          j["step"] = b.step;
          j["node"] = b.node;
          j["node_index"] = b.node_index;
          j["nodes"] = b.nodes;
          j["interval"] = rounded(b.interval, 3);
          j["unix"] = rounded(b.unix_time, 3);
          j["pid"] = b.pid;
        } else if constexpr (std::is_same_v<T, GpuInfo>) {
          head("gpu-info");
          j["gpu"] = b.gpu;
          if (!b.busid.empty()) j["bus"] = b.busid;
          if (!b.name.empty()) j["name"] = b.name;
          if (b.mem_total_mib) j["mem_total_mib"] = rounded(*b.mem_total_mib, 0);
        } else if constexpr (std::is_same_v<T, TaskInfo>) {
          head("task");
          j["rank"] = b.rank;
          j["local"] = b.local;
          j["pid"] = b.pid;
        } else if constexpr (std::is_same_v<T, GpuSample>) {
          head("gpu");
          j["gpu"] = b.gpu;
          if (b.util) j["util"] = rounded(*b.util, 0);
          if (b.mem_used_mib) j["mem_used_mib"] = rounded(*b.mem_used_mib, 0);
          if (b.power_w) j["power_w"] = rounded(*b.power_w, 1);
        } else if constexpr (std::is_same_v<T, CpuSample>) {
          head("cpu");
          j["rank"] = b.rank;
          j["cpu"] = rounded(b.cpu, 1);
        } else if constexpr (std::is_same_v<T, NetSample>) {
          head(b.ib ? "ib" : "net");
          j["nic"] = b.nic;
          j["rx_bytes"] = b.rx_bytes;
          j["tx_bytes"] = b.tx_bytes;
        } else if constexpr (std::is_same_v<T, Note>) {
          head("note");
          j["text"] = b.text;
        } else {
          head("end");
          j["reason"] = b.reason;
        }
      },
      r.body);
  // A GPU's name or a note is the driver's or the system's text: bytes that are not UTF-8 are
  // replaced rather than making the line unwritable.
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::optional<Record> parse_record(std::string_view line) {
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r' || line.back() == ' ' ||
                           line.back() == '\t'))
    line.remove_suffix(1);
  if (line.find_first_not_of(" \t") == std::string_view::npos) return std::nullopt;
  Fields f;
  if (!nlohmann::json::sax_parse(line.begin(), line.end(), &f)) throw PlanError(f.error);
  const Value* kind = f.find(kKind);
  if (!kind || kind->type != Value::Type::Text) throw PlanError("a record without a \"kind\" string");
  const Reader in{f, kind->text};
  Record r;
  r.time = in.real(kTime);
  const std::string& k = kind->text;
  if (k == "start") {
    const std::uint64_t format = in.count(kFormatKey, kMaxU32);
    if (format != kFormat)
      throw PlanError("this file is in ddp-monitor's format " + std::to_string(format) +
                      ", and this ddp-report reads format " + std::to_string(kFormat) +
                      ". Fix: use the ddp-report of the release that wrote it");
    StartRecord b;
    b.job = static_cast<std::uint32_t>(in.count(kJob, kMaxU32));
    b.step = static_cast<std::uint32_t>(in.count(kStep, kMaxU32));
    b.node = in.text(kNode);
    b.node_index = static_cast<unsigned>(in.count(kNodeIndex, 1u << 20));
    b.nodes = static_cast<unsigned>(in.count(kNodes, 1u << 20));
    b.interval = in.real(kInterval);
    b.unix_time = in.real(kUnix);
    if (f.find(kPid)) b.pid = static_cast<long>(in.count(kPid, kMaxPid));
    r.body = b;
  } else if (k == "gpu-info") {
    GpuInfo b;
    b.gpu = static_cast<unsigned>(in.count(kGpu, 1u << 16));
    b.busid = in.maybe_text(kBus);
    b.name = in.maybe_text(kName);
    b.mem_total_mib = in.maybe_real(kMemTotal);
    r.body = b;
  } else if (k == "task") {
    TaskInfo b;
    b.rank = static_cast<unsigned>(in.count(kRank, kMaxU32));
    b.local = static_cast<unsigned>(in.count(kLocal, kMaxU32));
    b.pid = static_cast<long>(in.count(kPid, kMaxPid));
    r.body = b;
  } else if (k == "gpu") {
    GpuSample b;
    b.gpu = static_cast<unsigned>(in.count(kGpu, 1u << 16));
    b.util = in.maybe_real(kUtil);
    b.mem_used_mib = in.maybe_real(kMemUsed);
    b.power_w = in.maybe_real(kPower);
    r.body = b;
  } else if (k == "cpu") {
    CpuSample b;
    b.rank = static_cast<unsigned>(in.count(kRank, kMaxU32));
    b.cpu = in.real(kCpu);
    r.body = b;
  } else if (k == "net" || k == "ib") {
    NetSample b;
    b.ib = k == "ib";
    b.nic = in.text(kNic);
    b.rx_bytes = in.count(kRx, kMaxBytes);
    b.tx_bytes = in.count(kTx, kMaxBytes);
    r.body = b;
  } else if (k == "note") {
    r.body = Note{in.text(kText)};
  } else if (k == "end") {
    r.body = EndRecord{in.maybe_text(kReason)};
  } else {
    return std::nullopt;
  }
  return r;
}

}  // namespace ddp::monitor
