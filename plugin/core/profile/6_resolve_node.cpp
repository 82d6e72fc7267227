// A profile as it applies to one node, and the merge rule behind it: later, narrower settings
// (a child profile, a per-node override) win field by field.
#include <algorithm>

#include "error.hpp"
#include "hostlist.hpp"
#include "profile_detail.hpp"

namespace ddp::plan {

const char* transport_name(Transport t) {
  switch (t) {
    case Transport::Ib: return "ib";
    case Transport::Ofi: return "ofi";
    case Transport::Socket: return "socket";
  }
  return "ib";
}

const char* hca_mode_name(HcaMode h) {
  switch (h) {
    case HcaMode::Nearest: return "nearest";
    case HcaMode::None: return "none";
    case HcaMode::List: return "list";
  }
  return "nearest";
}

namespace profile_detail {

void apply_settings(NodeSettings& base, const NodeSettings& over) {
  if (over.socket_interfaces) base.socket_interfaces = over.socket_interfaces;
  if (over.transport) base.transport = over.transport;
  if (over.hca) {
    base.hca = over.hca;
    base.hca_list = over.hca_list;
  }
  if (over.bind) base.bind = over.bind;
  for (const ProfileVariable& v : over.env) {
    const auto same = [&](const ProfileVariable& b) { return b.name == v.name; };
    const auto it = std::find_if(base.env.begin(), base.env.end(), same);
    if (it == base.env.end())
      base.env.push_back(v);
    else
      *it = v;
  }
}

void apply_preflight(PreflightSettings& base, const PreflightSettings& over) {
  if (over.enabled) base.enabled = over.enabled;
  if (over.min_busbw_gbps) base.min_busbw_gbps = over.min_busbw_gbps;
  if (over.max_latency_us) base.max_latency_us = over.max_latency_us;
  if (over.min_fraction_of_median) base.min_fraction_of_median = over.min_fraction_of_median;
  if (over.timeout_s) base.timeout_s = over.timeout_s;
}

void check_network(const NodeSettings& s, const std::string& where, const std::string& what) {
  if (!s.transport || *s.transport == Transport::Ib || !s.hca || *s.hca == HcaMode::None) return;
  throw PlanError(where + ": " + what + " combines network.transport: " +
                  transport_name(*s.transport) + " with hca: " + hca_mode_name(*s.hca) +
                  ", but NCCL_IB_HCA only steers NCCL's own InfiniBand transport. Fix: set "
                  "hca: none, or transport: ib");
}

}  // namespace profile_detail

ResolvedProfile resolve_for_node(const Profile& profile, const std::string& hostname) {
  ResolvedProfile r;
  r.name = profile.name;
  r.files = profile.files;
  r.port_range = profile.port_range;
  r.host_suffix = profile.host_suffix;
  r.preflight = profile.preflight;
  r.monitor = profile.monitor;
  r.watch = profile.watch;
  NodeSettings s = profile.settings;
  for (const NodeOverride& o : profile.nodes) {
    if (!hostlist_contains(o.match, hostname)) continue;
    profile_detail::apply_settings(s, o.settings);
    r.node_override = hostname + " in " + o.match + " (" + o.where + ")";
    break;
  }
  r.socket_interfaces = s.socket_interfaces.value_or(std::vector<std::string>{});
  r.transport = s.transport;
  r.hca = s.hca;
  r.hca_list = s.hca_list;
  r.bind = s.bind;
  r.env = s.env;
  return r;
}

ResolvedProfile resolve_for_node(const ProfileChoice& choice, const std::string& hostname) {
  ResolvedProfile r =
      choice.profile ? resolve_for_node(*choice.profile, hostname) : ResolvedProfile{};
  r.reason = choice.reason;
  return r;
}

}  // namespace ddp::plan
