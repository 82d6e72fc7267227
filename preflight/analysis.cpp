#include "analysis.hpp"

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <map>
#include <set>

namespace ddp::preflight {
namespace {

std::string number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, v >= 100 ? "%.0f" : v >= 1 ? "%.2f" : "%.3g", v);
  return text;
}

Standing standing(const std::string& name, double value, double med) {
  Standing s;
  s.name = name;
  s.busbw_gbps = value;
  s.median_gbps = med;
  s.fraction = med > 0 ? value / med : 1.0;
  s.slow = s.fraction < kSlowFraction;
  return s;
}

// The slowest of `values` (name -> busbw) against their median.
Standing slowest(const std::map<std::string, double>& values) {
  std::vector<double> all;
  for (const auto& [name, v] : values) all.push_back(v);
  const auto low = std::min_element(values.begin(), values.end(),
                                    [](const auto& a, const auto& b) { return a.second < b.second; });
  return standing(low->first, low->second, median(all));
}

std::string from(const Thresholds& t) { return t.origin.empty() ? "" : " (" + t.origin + ")"; }

}  // namespace

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

std::string exclude_option(const std::vector<std::string>& nodes) {
  std::string list;
  for (const auto& n : nodes) list += (list.empty() ? "" : ",") + n;
  return list.empty() ? "" : "--exclude=" + list;
}

Analysis analyse(const std::optional<Measurement>& all, const std::vector<Measurement>& links,
                 const Thresholds& t) {
  Analysis a;
  std::map<std::string, double> link_bw, node_best;
  for (const Measurement& m : links) {
    link_bw[m.name] = m.busbw_gbps;
    for (const auto& node : m.nodes) node_best[node] = std::max(node_best[node], m.busbw_gbps);
  }
  if (node_best.size() >= 3) {
    a.slowest_node = slowest(node_best);
    // Every node far below the median node, slowest first, so that one run names them all.
    for (const auto& [name, best] : node_best) {
      const Standing s = standing(name, best, a.slowest_node->median_gbps);
      if (s.slow || (t.min_fraction_of_median && s.fraction < *t.min_fraction_of_median))
        a.slow_nodes.push_back(s);
    }
    std::stable_sort(a.slow_nodes.begin(), a.slow_nodes.end(),
                     [](const Standing& x, const Standing& y) { return x.fraction < y.fraction; });
  }
  if (!link_bw.empty()) {
    a.slowest_link = slowest(link_bw);
    // Against what a healthy node reaches: when one node is slow, most of its links are, and
    // the median link would be one of them.
    if (a.slowest_node)
      a.slowest_link = standing(a.slowest_link->name, a.slowest_link->busbw_gbps,
                                a.slowest_node->median_gbps);
  }

  // Thresholds, over every measured group; one rank moves nothing and has no bandwidth to judge.
  std::vector<const Measurement*> groups;
  if (all && all->ranks > 1) groups.push_back(&*all);
  for (const Measurement& m : links) groups.push_back(&m);
  std::vector<const Measurement*> failing;
  for (const Measurement* m : groups) {
    bool fails = false;
    if (t.min_busbw_gbps && m->busbw_gbps < *t.min_busbw_gbps) {
      a.failures.push_back(m->name + ": bus bandwidth " + number(m->busbw_gbps) +
                           " GB/s is below min_busbw_gbps=" + number(*t.min_busbw_gbps) + from(t));
      fails = true;
    }
    if (t.max_latency_us && m->latency_us > *t.max_latency_us) {
      a.failures.push_back(m->name + ": latency " + number(m->latency_us) +
                           " us is above max_latency_us=" + number(*t.max_latency_us) + from(t));
      fails = true;
    }
    if (fails) failing.push_back(m);
  }
  bool node_too_slow = false;
  for (const Standing& n : a.slow_nodes) {
    if (!t.min_fraction_of_median || n.fraction >= *t.min_fraction_of_median) continue;
    node_too_slow = true;
    a.failures.push_back("node " + n.name + ": its best link reaches " + number(n.fraction) +
                         "x the median node's " + number(n.median_gbps) +
                         " GB/s, below min_fraction_of_median=" + number(*t.min_fraction_of_median) + from(t));
  }
  if (a.passed()) return a;

  // Which node to leave out: a node far below the others, else the one node every failing link
  // shares. A failing all-ranks measurement alone, or one link of a two-node step, names none.
  std::optional<std::set<std::string>> shared;  // the nodes every failing link has
  for (const Measurement* m : failing) {
    if (m->nodes.empty()) continue;  // all ranks cross every link: it points at none
    std::set<std::string> ends(m->nodes.begin(), m->nodes.end()), both;
    if (!shared) shared = ends;
    std::set_intersection(shared->begin(), shared->end(), ends.begin(), ends.end(),
                          std::inserter(both, both.begin()));
    *shared = both;
  }
  if (a.slowest_node && (a.slowest_node->slow || node_too_slow)) {
    for (const Standing& n : a.slow_nodes) a.exclude.push_back(n.name);
  } else if (shared && shared->size() == 1) {
    a.exclude = {*shared->begin()};
  } else if (shared && shared->size() == 2) {
    const std::vector<std::string> ends(shared->begin(), shared->end());
    a.advice = (node_best.size() == 2
                    ? "with two nodes the preflight cannot tell which end of the link is slow"
                    : "only the link " + ends[0] + " <-> " + ends[1] +
                          " fails while both nodes reach the others (tell the site)") +
               ": resubmit with " + exclude_option({ends[0]}) + " or " + exclude_option({ends[1]}) +
               (node_best.size() == 2 ? " (on three nodes or more it names the slow one)" : "");
    return a;
  }
  if (!a.exclude.empty())
    a.advice = "resubmit without " + std::string(a.exclude.size() > 1 ? "these nodes" : "it") +
               ": sbatch " + exclude_option(a.exclude) + " ...";
  else
    a.advice = "no single node stands out: the all-ranks measurement or several links are slow, "
               "so ask the site to look at the network, or relax the thresholds";
  return a;
}

std::optional<double> fraction_of_median(const Measurement& link, const Analysis& analysis) {
  const double median = analysis.slowest_link ? analysis.slowest_link->median_gbps : 0;
  if (median <= 0) return std::nullopt;
  return link.busbw_gbps / median;
}

}  // namespace ddp::preflight
