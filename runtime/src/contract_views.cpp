#include "contract_views.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "contract_read.hpp"  // kMaxWorldSize
#include "error.hpp"
#include "parse.hpp"

namespace ddp::detail {
namespace {

std::string who(const RankView& v) { return "rank " + std::to_string(v.rank) + " (on " + v.host + ")"; }

std::string hosts_of(const std::vector<const RankView*>& views) {
  std::set<std::string> hosts;
  for (const RankView* v : views) hosts.insert(v->host);
  std::string out;
  for (const auto& h : hosts) out += (out.empty() ? "" : ", ") + h;
  return out;
}

bool parse_int(const std::string& text, int& out) {
  try {
    out = static_cast<int>(plan::parse_unsigned("view", text, 0, kMaxWorldSize));
    return true;
  } catch (const plan::PlanError&) {
    return false;
  }
}

bool parse_pair(const std::string& text, int& a, int& b) {
  const auto slash = text.find('/');
  return slash != std::string::npos && parse_int(text.substr(0, slash), a) &&
         parse_int(text.substr(slash + 1), b);
}

// What makes `v` part of another step than `ref`: its WORLD_SIZE or its MASTER_ADDR:MASTER_PORT.
void add_step_differences(const RankView& ref, const RankView& v, std::vector<std::string>& problems) {
  if (v.world_size != ref.world_size && problems.size() < 3)
    problems.push_back(who(v) + " has WORLD_SIZE=" + std::to_string(v.world_size) + ", " +
                       who(ref) + " has " + std::to_string(ref.world_size));
  if (v.master != ref.master && problems.size() < 3)
    problems.push_back(who(v) + " has MASTER_ADDR:MASTER_PORT=" + plan::quoted(v.master) + ", " +
                       who(ref) + " has " + plan::quoted(ref.master));
}

std::optional<std::string> in_words(const std::vector<std::string>& problems) {
  if (problems.empty()) return std::nullopt;
  std::string text = "the ranks disagree on the launch contract: ";
  for (std::size_t i = 0; i < problems.size(); ++i) text += (i ? "; " : "") + problems[i];
  return text +
         ". Every task of a step must get the same WORLD_SIZE and MASTER_ADDR:MASTER_PORT and "
         "its own RANK and LOCAL_RANK: check that no wrapper or job script sets them per task "
         "(srun --ddp sets them all)";
}

}  // namespace

RankView view_of(const Context& c, const std::string& host) {
  RankView v;
  v.rank = c.rank;
  v.world_size = c.world_size;
  v.local_rank = c.local_rank;
  v.local_world_size = c.local_world_size;
  v.node_rank = c.node_rank;
  v.master = c.master_addr + ":" + std::to_string(c.master_port);
  v.host = host;
  return v;
}

std::string encode_view(const RankView& v) {
  return "rank=" + std::to_string(v.rank) + " world=" + std::to_string(v.world_size) +
         " local=" + std::to_string(v.local_rank) + "/" + std::to_string(v.local_world_size) +
         " node=" + std::to_string(v.node_rank) + " master=" + v.master + " host=" + v.host;
}

std::optional<RankView> decode_view(const std::string& text) {
  RankView v;
  std::istringstream in(text);
  std::string field;
  int seen = 0;
  while (in >> field) {
    const auto eq = field.find('=');
    if (eq == std::string::npos) return std::nullopt;
    const std::string key = field.substr(0, eq), value = field.substr(eq + 1);
    bool ok = true;
    if (key == "rank") ok = parse_int(value, v.rank);
    else if (key == "world") ok = parse_int(value, v.world_size);
    else if (key == "local") ok = parse_pair(value, v.local_rank, v.local_world_size);
    else if (key == "node") ok = parse_int(value, v.node_rank);
    else if (key == "master") v.master = value;
    else if (key == "host") v.host = value;
    else ok = false;
    if (!ok) return std::nullopt;
    ++seen;
  }
  if (seen != 6) return std::nullopt;
  return v;
}

std::optional<std::string> contract_disagreement(const std::vector<RankView>& views) {
  if (views.empty()) return std::nullopt;
  std::vector<std::string> problems;
  // Rank 0 serves the store, so its view is the one the others are compared with.
  const RankView& ref =
      *std::min_element(views.begin(), views.end(),
                        [](const RankView& a, const RankView& b) { return a.rank < b.rank; });
  for (const RankView& v : views) add_step_differences(ref, v, problems);
  if (problems.empty()) {
    std::map<int, std::vector<const RankView*>> by_rank, by_node;
    for (const RankView& v : views) {
      by_rank[v.rank].push_back(&v);
      by_node[v.node_rank].push_back(&v);
    }
    for (const auto& [rank, claims] : by_rank)
      if (claims.size() > 1)
        problems.push_back("RANK=" + std::to_string(rank) + " is claimed by " +
                           std::to_string(claims.size()) + " tasks (on " + hosts_of(claims) + ")");
    for (int r = 0; r < ref.world_size && problems.size() < 3; ++r)
      if (!by_rank.count(r) && by_rank.size() < views.size())
        problems.push_back("no task has RANK=" + std::to_string(r));
    for (const auto& [node, ranks] : by_node) {
      if (problems.size() >= 3) break;
      const std::string on = "NODE_RANK=" + std::to_string(node);
      std::set<std::string> hosts;
      std::set<int> local_ranks, local_worlds;
      for (const RankView* v : ranks) {
        hosts.insert(v->host);
        local_ranks.insert(v->local_rank);
        local_worlds.insert(v->local_world_size);
      }
      if (hosts.size() > 1) {
        problems.push_back("nodes " + hosts_of(ranks) + " all have " + on);
        continue;
      }
      const std::string node_name = "node " + *hosts.begin() + " (" + on + ")";
      if (local_worlds.size() > 1) {
        problems.push_back(node_name + " has ranks with different LOCAL_WORLD_SIZE");
      } else if (static_cast<std::size_t>(*local_worlds.begin()) != ranks.size() ||
                 local_ranks.size() != ranks.size() || *local_ranks.rbegin() >= *local_worlds.begin()) {
        std::string locals;
        for (const RankView* v : ranks) locals += (locals.empty() ? "" : ",") + std::to_string(v->local_rank);
        problems.push_back(node_name + " runs " + std::to_string(ranks.size()) +
                           " ranks with LOCAL_RANK " + locals + " but LOCAL_WORLD_SIZE=" +
                           std::to_string(*local_worlds.begin()));
      }
    }
  }
  return in_words(problems);
}

std::optional<std::string> step_difference(const RankView& rank0, const RankView& mine) {
  std::vector<std::string> problems;
  add_step_differences(rank0, mine, problems);
  return in_words(problems);
}

}  // namespace ddp::detail
