#include "report.hpp"

#include <algorithm>
#include <cstdio>

namespace ddp::preflight {
namespace {

std::string fixed(double v, const char* format) {
  char text[48];
  std::snprintf(text, sizeof text, format, v);
  return text;
}

std::string gbps(double v) { return fixed(v, v >= 100 ? "%.0f GB/s" : v >= 0.1 ? "%.2f GB/s" : "%.4f GB/s"); }
std::string micros(double v) { return fixed(v, v >= 1000 ? "%.0f us" : "%.1f us"); }

const char* status_mark(Status s) {
  switch (s) {
    case Status::Ok: return "ok";
    case Status::Failed: return "FAILED";
    case Status::Skipped: return "-";
  }
  return "-";
}

std::string standing_text(const Standing& s, const char* kind) {
  return std::string("slowest ") + kind + ": " + s.name + " at " + gbps(s.busbw_gbps) + ", " +
         fixed(s.fraction, "%.2f") + "x the median " + gbps(s.median_gbps) +
         (s.slow ? "  <- slow" : "");
}

}  // namespace

std::string size_text(std::size_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB"};
  int u = 0;
  while (u < 3 && bytes >= 1024 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++u;
  }
  return std::to_string(bytes) + " " + units[u];
}

std::string table(const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> width;
  for (const auto& row : rows)
    for (std::size_t i = 0; i < row.size(); ++i) {
      if (width.size() <= i) width.push_back(0);
      width[i] = std::max(width[i], row[i].size());
    }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line += std::string(width[i] - row[i].size() + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

Measurement measurement(const std::string& name, std::vector<std::string> nodes,
                        const AllreduceSweep& sweep) {
  Measurement m;
  m.name = name;
  m.nodes = std::move(nodes);
  m.ranks = sweep.ranks;
  m.latency_us = sweep.latency_seconds() * 1e6;
  m.busbw_gbps = sweep.peak().busbw_gbps;
  m.peak_bytes = sweep.peak().bytes;
  m.cut_short = sweep.cut_short;
  return m;
}

std::string render_checks(const std::vector<Check>& rows) {
  std::vector<std::vector<std::string>> cells{{"CHECK", "RESULT", "DETAIL"}};
  for (const Check& c : rows) cells.push_back({c.what, status_mark(c.status), c.detail});
  return table(cells);
}

std::string render_measurements(const std::optional<Measurement>& all,
                                const std::vector<Measurement>& links, const Analysis& a) {
  std::vector<std::vector<std::string>> cells{
      {"ALL-REDUCE", "RANKS", "LATENCY", "BUSBW", "AT", "VS MEDIAN"}};
  const auto row = [&](const Measurement& m, const std::string& vs) {
    cells.push_back({m.name, std::to_string(m.ranks), micros(m.latency_us), gbps(m.busbw_gbps),
                     size_text(m.peak_bytes) + (m.cut_short ? " (budget)" : ""), vs});
  };
  if (all) row(*all, "");
  for (const Measurement& m : links) {
    const auto vs = fraction_of_median(m, a);
    row(m, vs ? fixed(*vs, "%.2f") : "-");
  }
  return table(cells);
}

std::string render_sweep(const AllreduceSweep& sweep) {
  std::vector<std::vector<std::string>> cells{{"SIZE", "ITERS", "TIME", "ALGBW", "BUSBW"}};
  for (const AllreduceSample& s : sweep.samples)
    cells.push_back({size_text(s.bytes), std::to_string(s.iterations), micros(s.seconds * 1e6),
                     gbps(s.algbw_gbps), gbps(s.busbw_gbps)});
  return table(cells);
}

std::string render_standings(const Analysis& a, std::size_t links) {
  std::string out;
  if (a.slowest_node) out += standing_text(*a.slowest_node, "node (its best link)") + "\n";
  if (a.slowest_link)
    out += links == 1 ? "one link: " + a.slowest_link->name + " (no other link to compare it with)\n"
                      : standing_text(*a.slowest_link, "link") + "\n";
  return out;
}

std::string failure_message(const Analysis& a) {
  // A thousand nodes may fail a hundred links: the first few, counted beyond (the table and the
  // JSON have them all); the advice's --exclude= lists every node it names.
  std::string text;
  const std::size_t shown = std::min(a.failures.size(), kMaxFailuresNamed);
  for (std::size_t i = 0; i < shown; ++i) text += (i ? "; " : "") + a.failures[i];
  if (a.failures.size() > shown) text += "; and " + std::to_string(a.failures.size() - shown) + " more";
  return text + ". " + (a.advice.empty() ? std::string() : "Fix: " + a.advice);
}

}  // namespace ddp::preflight
