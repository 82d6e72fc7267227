#include "report_json.hpp"

namespace ddp::preflight {
namespace {

using Json = nlohmann::ordered_json;

Json or_null(const std::optional<double>& v) { return v ? Json(*v) : Json(nullptr); }

Json measurement_json(const Measurement& m, const Analysis& a, bool link) {
  return {{"name", m.name},
          {"nodes", m.nodes},
          {"ranks", m.ranks},
          {"latency_us", m.latency_us},
          {"busbw_gbps", m.busbw_gbps},
          {"peak_bytes", m.peak_bytes},
          {"cut_short", m.cut_short},
          {"vs_median", link ? or_null(fraction_of_median(m, a)) : Json(nullptr)}};
}

Json standing_json(const std::optional<Standing>& s) {
  if (!s) return nullptr;
  return {{"name", s->name},
          {"busbw_gbps", s->busbw_gbps},
          {"median_gbps", s->median_gbps},
          {"fraction", s->fraction},
          {"slow", s->slow}};
}

}  // namespace

Json result_json(const PreflightResult& r) {
  Json checks = Json::array(), links = Json::array(), sweep = Json::array();
  for (const Check& c : r.checks)
    checks.push_back({{"check", c.what}, {"status", status_name(c.status)}, {"detail", c.detail}});
  for (const Measurement& m : r.links) links.push_back(measurement_json(m, r.analysis, true));
  if (r.sweep)
    for (const AllreduceSample& s : r.sweep->samples)
      sweep.push_back({{"bytes", s.bytes},
                       {"iterations", s.iterations},
                       {"time_us", s.seconds * 1e6},
                       {"algbw_gbps", s.algbw_gbps},
                       {"busbw_gbps", s.busbw_gbps}});
  const Thresholds& t = r.thresholds;
  return {{"format", kPreflightFormat},
          {"verdict", r.passed ? "pass" : "fail"},
          {"stopped_at", r.stopped_at},
          {"reason", r.reason},
          {"exclude", r.analysis.exclude},
          {"advice", r.analysis.advice},
          {"failures", r.analysis.failures},
          {"ranks", r.ranks},
          {"nodes", r.nodes},
          {"backend", r.backend.empty() ? Json(nullptr) : Json(r.backend)},
          {"rendezvous", r.rendezvous},
          {"seconds", r.seconds},
          {"checks", std::move(checks)},
          {"all_ranks", r.all ? measurement_json(*r.all, r.analysis, false) : Json(nullptr)},
          {"all_ranks_sweep", std::move(sweep)},
          {"links", std::move(links)},
          {"slowest_node", standing_json(r.analysis.slowest_node)},
          {"slowest_link", standing_json(r.analysis.slowest_link)},
          {"thresholds",
           {{"min_busbw_gbps", or_null(t.min_busbw_gbps)},
            {"max_latency_us", or_null(t.max_latency_us)},
            {"min_fraction_of_median", or_null(t.min_fraction_of_median)},
            {"origin", t.origin.empty() ? Json(nullptr) : Json(t.origin)}}}};
}

}  // namespace ddp::preflight
