// Which profile a step uses: the user's choice, else the admin's default, else the one whose
// `match` fits this cluster and node best. Every node of a step decides on its own, so the
// choice depends only on facts all nodes share or on this node's name.
#include <algorithm>

#include "error.hpp"
#include "hostlist.hpp"
#include "parse.hpp"
#include "profile_detail.hpp"

namespace ddp::plan {
namespace {

struct Candidate {
  Profile profile;
  int specificity = 0;  // 1: cluster or nodes; 2: both
  std::string reason;
};

std::optional<Candidate> candidate(Profile p, const std::optional<std::string>& cluster_name,
                                   const std::string& hostname) {
  const ProfileMatch& m = p.match;
  if (m.empty()) return std::nullopt;  // used by name only
  if (m.cluster && m.cluster != cluster_name) return std::nullopt;
  if (m.nodes && !hostlist_contains(*m.nodes, hostname)) return std::nullopt;
  std::string reason = "matched";
  if (m.cluster) reason += " cluster " + *m.cluster;
  if (m.cluster && m.nodes) reason += " and";
  if (m.nodes) reason += " node " + hostname + " (" + *m.nodes + ")";
  const int specificity = (m.cluster ? 1 : 0) + (m.nodes ? 1 : 0);
  return Candidate{std::move(p), specificity, std::move(reason)};
}

// Not named tie: with <tuple> reachable (GCC 14), ADL on std::vector would pick std::tie instead.
[[noreturn]] void fail_equally_specific(const std::vector<Candidate>& best) {
  std::string names;
  for (std::size_t i = 0; i < best.size(); ++i) {
    const char* sep = i == 0 ? "" : i + 1 == best.size() ? " and " : ", ";
    names += sep + quoted(best[i].profile.name) + " (" + best[i].reason + ", " +
             best[i].profile.match.where + ")";
  }
  throw PlanError("profiles " + names +
                  " match this node equally well. Fix: give one both cluster and nodes so it is "
                  "more specific, narrow a nodes list, or choose one: default_profile=NAME in "
                  "plugstack.conf or --ddp-profile=NAME");
}

}  // namespace

ProfileChoice select_profile(const std::string& dir, const std::optional<std::string>& requested,
                             const std::optional<std::string>& default_profile,
                             const std::optional<std::string>& cluster_name,
                             const std::string& hostname) {
  profile_detail::ProfileShelf shelf = profile_detail::ProfileShelf::directory(dir);
  if (requested)
    return {profile_detail::load_named(shelf, *requested, "--ddp-profile"),
            "--ddp-profile=" + *requested};
  if (default_profile)
    return {profile_detail::load_named(shelf, *default_profile, "plugstack.conf default_profile"),
            "plugstack default_profile=" + *default_profile};
  std::vector<Candidate> best;
  for (const std::string& name : shelf.names()) {
    auto c = candidate(profile_detail::load_named(shelf, name, "profile"), cluster_name, hostname);
    if (!c || (!best.empty() && c->specificity < best.front().specificity)) continue;
    if (!best.empty() && c->specificity > best.front().specificity) best.clear();
    best.push_back(std::move(*c));
  }
  if (best.empty()) return {std::nullopt, "no profile matched: built-in defaults"};
  if (best.size() > 1) fail_equally_specific(best);
  return {std::move(best.front().profile), best.front().reason};
}

}  // namespace ddp::plan
