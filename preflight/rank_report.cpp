#include "rank_report.hpp"

#include <algorithm>
#include <map>
#include <set>

namespace ddp::preflight {
namespace {

std::string who(const RankReport& r) { return r.host + " rank " + std::to_string(r.rank); }

// At most `most` items, then "and N more".
std::string listed(const std::vector<std::string>& items, std::size_t most) {
  std::string out;
  for (std::size_t i = 0; i < items.size() && i < most; ++i) out += (i ? "; " : "") + items[i];
  if (items.size() > most) out += "; and " + std::to_string(items.size() - most) + " more";
  return out;
}

}  // namespace

std::vector<Check> summarise(const std::vector<RankReport>& reports) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<std::pair<const RankReport*, const Check*>>> by_what;
  for (const RankReport& r : reports)
    for (const Check& c : r.checks) {
      if (!by_what.count(c.what)) order.push_back(c.what);
      by_what[c.what].push_back({&r, &c});
    }
  std::vector<Check> rows;
  for (const std::string& what : order) {
    // The same failure on many ranks (a missing interface everywhere) is said once.
    std::vector<std::string> failures;
    std::map<std::string, std::vector<std::string>> failed_on;
    std::set<std::string> ok_details, skipped_details;
    for (const auto& [r, c] : by_what[what]) {
      if (c->status == Status::Failed) {
        if (!failed_on.count(c->detail)) failures.push_back(c->detail);
        failed_on[c->detail].push_back(who(*r));
      }
      if (c->status == Status::Ok) ok_details.insert(c->detail);
      if (c->status == Status::Skipped) skipped_details.insert(c->detail);
    }
    Check row{what, Status::Skipped, ""};
    if (!failures.empty()) {
      row.status = Status::Failed;
      std::vector<std::string> lines;
      for (const auto& f : failures) {
        std::string ranks = listed(failed_on[f], 4);
        for (auto at = ranks.find("; "); at != std::string::npos; at = ranks.find("; ", at))
          ranks.replace(at, 2, ", ");
        lines.push_back(f + " (" + ranks + ")");
      }
      row.detail = listed(lines, 4);
    } else if (!ok_details.empty()) {
      row.status = Status::Ok;
      row.detail = listed({ok_details.begin(), ok_details.end()}, 3);
    } else {
      row.detail = listed({skipped_details.begin(), skipped_details.end()}, 2);
    }
    rows.push_back(row);
  }
  // Two ranks of one node on one GPU: each saw "its" GPU, only together is it wrong.
  std::map<std::pair<std::string, std::string>, std::vector<int>> drivers;
  for (const RankReport& r : reports)
    if (!r.gpu_bus_id.empty()) drivers[{r.host, r.gpu_bus_id}].push_back(r.rank);
  std::vector<std::string> shared;
  for (const auto& [where, ranks] : drivers)
    if (ranks.size() > 1) {
      std::string list;
      for (int k : ranks) list += (list.empty() ? "" : ", ") + std::to_string(k);
      shared.push_back("ranks " + list + " on " + where.first + " all drive GPU " + where.second);
    }
  if (!shared.empty())
    for (Check& row : rows)
      if (row.what == "gpus") {
        row.status = Status::Failed;
        row.detail = listed(shared, 4) + " (give each rank its own: --ddp-gpus, one task per GPU)";
      }
  return rows;
}

std::vector<std::string> nodes_that_failed(const std::vector<RankReport>& reports) {
  std::map<int, std::pair<std::string, bool>> nodes;  // NODE_RANK -> host, failed
  for (const RankReport& r : reports) {
    auto& [host, failed] = nodes[r.node_rank];
    host = r.host;
    for (const Check& c : r.checks) failed = failed || c.status == Status::Failed;
  }
  std::vector<std::string> out;
  for (const auto& [node, entry] : nodes)
    if (entry.second) out.push_back(entry.first);
  if (out.size() == nodes.size()) out.clear();
  return out;
}

std::vector<NodeLeader> node_leaders(const std::vector<RankReport>& reports) {
  std::map<int, NodeLeader> by_node;
  for (const RankReport& r : reports) {
    auto it = by_node.find(r.node_rank);
    if (it == by_node.end() || r.rank < it->second.rank) by_node[r.node_rank] = {r.host, r.rank};
  }
  std::vector<NodeLeader> out;
  for (const auto& [node, leader] : by_node) out.push_back(leader);
  return out;
}

}  // namespace ddp::preflight
