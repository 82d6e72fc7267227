#include "rank_places.hpp"

#include <algorithm>
#include <cctype>

namespace ddp::plan {
namespace {

// "n017" as "n" and "017"; a name without a trailing number has an empty number.
struct NodeName {
  std::string prefix, number;
};

NodeName split(const std::string& node) {
  std::size_t i = node.size();
  while (i > 0 && std::isdigit(static_cast<unsigned char>(node[i - 1]))) --i;
  return {node.substr(0, i), node.substr(i)};
}

// Whether `b` is the node numbered right after `a`, as a Slurm host range would list it.
bool follows(const NodeName& a, const NodeName& b) {
  if (a.prefix != b.prefix || a.number.empty() || b.number.empty() || a.number.size() > 9 ||
      b.number.size() > 9)
    return false;
  const bool padded = a.number.size() > 1 && a.number[0] == '0';
  if (padded && a.number.size() != b.number.size()) return false;
  if (b.number.size() > 1 && b.number[0] == '0' && b.number.size() != a.number.size()) return false;
  return std::stoul(b.number) == std::stoul(a.number) + 1;
}

struct Entry {
  unsigned first_rank = 0, last_rank = 0;
  NodeName first_node, last_node;
  std::string node;  // the first node's full name, for an entry of one node
};

std::string text_of(const Entry& e) {
  std::string where = e.node;
  if (e.last_node.number != e.first_node.number)
    where = e.first_node.prefix + "[" + e.first_node.number + "-" + e.last_node.number + "]";
  if (e.first_rank == e.last_rank) return where + ": rank " + std::to_string(e.first_rank);
  return where + ": ranks " + std::to_string(e.first_rank) + "-" + std::to_string(e.last_rank);
}

}  // namespace

std::string ranks_by_node(std::vector<RankPlace> named, std::size_t total) {
  std::sort(named.begin(), named.end(),
            [](const RankPlace& a, const RankPlace& b) { return a.rank < b.rank; });
  std::vector<Entry> entries;
  for (const RankPlace& p : named) {
    const NodeName name = split(p.node);
    if (!entries.empty() && entries.back().last_rank + 1 == p.rank) {
      Entry& e = entries.back();
      const bool same_node = e.last_node.prefix == name.prefix && e.last_node.number == name.number;
      if (same_node || follows(e.last_node, name)) {
        e.last_rank = p.rank;
        e.last_node = name;
        continue;
      }
    }
    if (!entries.empty() && entries.back().last_rank == p.rank) continue;  // named twice
    entries.push_back({p.rank, p.rank, name, name, p.node});
  }
  std::string out;
  std::size_t counted = 0;
  for (const Entry& e : entries) {
    out += (out.empty() ? "" : "; ") + text_of(e);
    counted += e.last_rank - e.first_rank + 1;
  }
  if (total > counted) out += (out.empty() ? "" : "; and ") + std::to_string(total - counted) + " more";
  return out;
}

}  // namespace ddp::plan
