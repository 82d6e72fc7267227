#include "rank_report.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "error.hpp"
#include "parse.hpp"

namespace ddp::preflight {
namespace {

const char* status_word(Status s) {
  switch (s) {
    case Status::Ok: return "ok";
    case Status::Failed: return "failed";
    case Status::Skipped: return "skipped";
  }
  return "skipped";
}

std::optional<Status> status_of(const std::string& word) {
  if (word == "ok") return Status::Ok;
  if (word == "failed") return Status::Failed;
  if (word == "skipped") return Status::Skipped;
  return std::nullopt;
}

// Fields are tab-separated, records newline-separated: neither may occur inside one.
std::string flat(std::string text) {
  for (char& c : text)
    if (c == '\t' || c == '\n' || c == '\r') c = ' ';
  return text;
}

std::vector<std::string> fields(const std::string& line) {
  std::vector<std::string> out;
  std::string f;
  std::istringstream in(line);
  while (std::getline(in, f, '\t')) out.push_back(f);
  return out;
}

bool number(const std::string& text, int& out) {
  try {
    out = static_cast<int>(plan::parse_unsigned("rank report", text, 0, 1u << 24));
    return true;
  } catch (const plan::PlanError&) {
    return false;
  }
}

std::string who(const RankReport& r) { return r.host + " rank " + std::to_string(r.rank); }

// At most `most` items, then "and N more".
std::string listed(const std::vector<std::string>& items, std::size_t most) {
  std::string out;
  for (std::size_t i = 0; i < items.size() && i < most; ++i) out += (i ? "; " : "") + items[i];
  if (items.size() > most) out += "; and " + std::to_string(items.size() - most) + " more";
  return out;
}

}  // namespace

std::string encode_report(const RankReport& r) {
  std::string text = "rank\t" + std::to_string(r.rank) + "\t" + std::to_string(r.node_rank) +
                     "\t" + flat(r.host) + "\t" + flat(r.gpu_bus_id) + "\n";
  for (const Check& c : r.checks)
    text += "check\t" + flat(c.what) + "\t" + status_word(c.status) + "\t" + flat(c.detail) + "\n";
  return text;
}

std::optional<RankReport> decode_report(const std::string& text) {
  RankReport r;
  std::istringstream in(text);
  std::string line;
  bool head = false;
  while (std::getline(in, line)) {
    const auto f = fields(line);
    if (f.size() >= 4 && f[0] == "rank" && !head) {
      if (!number(f[1], r.rank) || !number(f[2], r.node_rank)) return std::nullopt;
      r.host = f[3];
      r.gpu_bus_id = f.size() > 4 ? f[4] : "";
      head = true;
    } else if (f.size() >= 3 && f[0] == "check" && head) {
      const auto s = status_of(f[2]);
      if (!s) return std::nullopt;
      r.checks.push_back({f[1], *s, f.size() > 3 ? f[3] : ""});
    } else {
      return std::nullopt;
    }
  }
  if (!head) return std::nullopt;
  return r;
}

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
