#include "messages.hpp"

#include <nlohmann/json.hpp>

#include "ddp/error.hpp"

namespace ddp::preflight {
namespace {

using Json = nlohmann::json;

Status status_of(const std::string& word) {
  for (Status s : {Status::Ok, Status::Failed, Status::Skipped})
    if (word == status_name(s)) return s;
  throw std::invalid_argument("status '" + word + "' is none of ok, failed, skipped");
}

// Parses `text` with `read`; any error becomes one that names the sender.
template <class T, class Read>
T decode(const std::string& text, int from, const char* what, Read read) {
  try {
    return read(Json::parse(text));
  } catch (const std::exception& e) {
    std::string why = e.what();
    // nlohmann's "[json.exception.type_error.302] type must be string, but is null": its words only.
    if (const auto end = why.find("] "); why.rfind("[json.exception.", 0) == 0 && end != std::string::npos)
      why = why.substr(end + 2);
    throw Error("the " + std::string(what) + " of rank " + std::to_string(from) +
                " cannot be read (" + why + "): that rank runs another ddp-preflight, or its message "
                "was damaged on the way. Fix: install the same slurm-ddp release on every node");
  }
}

}  // namespace

std::string encode_report(const RankReport& r) {
  Json checks = Json::array();
  for (const Check& c : r.checks)
    checks.push_back({{"check", c.what}, {"status", status_name(c.status)}, {"detail", c.detail}});
  return Json{{"rank", r.rank},
              {"node_rank", r.node_rank},
              {"host", r.host},
              {"gpu_bus_id", r.gpu_bus_id},
              {"checks", std::move(checks)}}
      .dump(-1, ' ', false, Json::error_handler_t::replace);
}

RankReport decode_report(const std::string& text, int from) {
  return decode<RankReport>(text, from, "check report", [&](const Json& j) {
    RankReport r;
    r.rank = j.at("rank").get<int>();
    r.node_rank = j.at("node_rank").get<int>();
    r.host = j.at("host").get<std::string>();
    r.gpu_bus_id = j.at("gpu_bus_id").get<std::string>();
    for (const Json& c : j.at("checks"))
      r.checks.push_back({c.at("check").get<std::string>(), status_of(c.at("status").get<std::string>()),
                          c.at("detail").get<std::string>()});
    if (r.rank != from)
      throw std::invalid_argument("it says it is rank " + std::to_string(r.rank));
    return r;
  });
}

std::string encode_links(const std::vector<Measurement>& links) {
  Json out = Json::array();
  for (const Measurement& m : links)
    out.push_back({{"nodes", m.nodes},
                   {"ranks", m.ranks},
                   {"latency_us", m.latency_us},
                   {"busbw_gbps", m.busbw_gbps},
                   {"peak_bytes", m.peak_bytes},
                   {"cut_short", m.cut_short}});
  return out.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::vector<Measurement> decode_links(const std::string& text, int from) {
  return decode<std::vector<Measurement>>(text, from, "link measurements", [](const Json& j) {
    if (!j.is_array()) throw std::invalid_argument("not a list of links");
    std::vector<Measurement> out;
    for (const Json& l : j) {
      Measurement m;
      m.nodes = l.at("nodes").get<std::vector<std::string>>();
      if (m.nodes.size() != 2) throw std::invalid_argument("a link between " + std::to_string(m.nodes.size()) + " nodes");
      m.name = m.nodes[0] + " <-> " + m.nodes[1];
      m.ranks = l.at("ranks").get<int>();
      m.latency_us = l.at("latency_us").get<double>();
      m.busbw_gbps = l.at("busbw_gbps").get<double>();
      m.peak_bytes = l.at("peak_bytes").get<std::size_t>();
      m.cut_short = l.at("cut_short").get<bool>();
      out.push_back(std::move(m));
    }
    return out;
  });
}

std::string encode_orders(const RankOrders& o) {
  Json jobs = Json::array();
  for (const PairJob& p : o.jobs) jobs.push_back(Json::array({p.round, p.rank_a, p.rank_b, p.host_a, p.host_b}));
  return Json{{"measure", o.measure}, {"rounds", o.rounds}, {"jobs", std::move(jobs)}}
      .dump(-1, ' ', false, Json::error_handler_t::replace);
}

RankOrders decode_orders(const std::string& text) {
  return decode<RankOrders>(text, 0, "orders", [](const Json& j) {
    RankOrders o;
    o.measure = j.at("measure").get<bool>();
    o.rounds = j.at("rounds").get<int>();
    for (const Json& p : j.at("jobs")) {
      if (!p.is_array() || p.size() != 5) throw std::invalid_argument("a pair job is not [round, rank, rank, host, host]");
      o.jobs.push_back({p[0].get<int>(), p[1].get<int>(), p[2].get<int>(), p[3].get<std::string>(),
                        p[4].get<std::string>()});
      if (o.jobs.back().round < 0 || o.jobs.back().round >= o.rounds)
        throw std::invalid_argument("a pair job in round " + std::to_string(o.jobs.back().round) + " of " +
                                    std::to_string(o.rounds));
    }
    return o;
  });
}

}  // namespace ddp::preflight
