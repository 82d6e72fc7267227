#include "profile_json.hpp"

namespace ddp::plan {
namespace {

using nlohmann::json;

// Unset stays null, so "the profile does not say" reads differently from an empty value.
template <class T, class F>
json or_null(const std::optional<T>& value, F to_json) {
  return value ? json(to_json(*value)) : json(nullptr);
}

json text(const std::string& s) { return s; }

json env_json(const std::vector<ProfileVariable>& env) {
  json out = json::array();
  for (const ProfileVariable& v : env)
    out.push_back({{"name", v.name}, {"value", v.value}, {"forced", v.forced}});
  return out;
}

json rendezvous_json(const std::optional<PortRange>& range,
                     const std::optional<std::string>& host_suffix) {
  return {{"port_range", or_null(range,
                                 [](const PortRange& r) {
                                   return json{r.low, r.high};
                                 })},
          {"host_suffix", or_null(host_suffix, text)}};
}

json preflight_json(const PreflightSettings& p) {
  const auto num = [](double v) { return json(v); };
  return {{"enabled", or_null(p.enabled, [](bool b) { return json(b); })},
          {"min_busbw_gbps", or_null(p.min_busbw_gbps, num)},
          {"max_latency_us", or_null(p.max_latency_us, num)},
          {"min_fraction_of_median", or_null(p.min_fraction_of_median, num)},
          {"timeout_s", or_null(p.timeout_s, [](unsigned v) { return json(v); })}};
}

json network_json(const std::optional<std::vector<std::string>>& interfaces,
                  const std::optional<Transport>& transport, const std::optional<HcaMode>& hca,
                  const std::vector<std::string>& hca_list) {
  return {{"socket_interfaces", or_null(interfaces, [](const auto& v) { return json(v); })},
          {"transport", or_null(transport, transport_name)},
          {"hca", or_null(hca, hca_mode_name)},
          {"hca_list", hca_list}};
}

json binding_json(const std::optional<Bind>& bind) {
  return {{"cpus", or_null(bind, [](Bind b) { return b == Bind::Closest ? "closest" : "none"; })}};
}

json monitor_json(const MonitorDefaults& m) {
  return {{"enabled", or_null(m.enabled, [](bool b) { return b; })},
          {"interval", or_null(m.interval, [](unsigned i) { return i; })},
          {"dir", or_null(m.dir, text)}};
}

json watch_json(const WatchDefaults& w) {
  return {{"enabled", or_null(w.enabled, [](bool b) { return b; })},
          {"timeout", or_null(w.timeout, [](unsigned t) { return t; })},
          {"retries", or_null(w.retries, [](unsigned r) { return r; })}};
}

void add_settings(json& j, const NodeSettings& s) {
  j["network"] = network_json(s.socket_interfaces, s.transport, s.hca, s.hca_list);
  j["binding"] = binding_json(s.bind);
  j["env"] = env_json(s.env);
}

}  // namespace

json profile_to_json(const Profile& p) {
  json j = {{"name", p.name}, {"description", p.description}, {"files", p.files}};
  j["match"] = p.match.empty() ? json(nullptr)
                               : json{{"cluster", or_null(p.match.cluster, text)},
                                      {"nodes", or_null(p.match.nodes, text)}};
  j["rendezvous"] = rendezvous_json(p.port_range, p.host_suffix);
  j["preflight"] = preflight_json(p.preflight);
  add_settings(j, p.settings);
  j["nodes"] = json::array();
  for (const NodeOverride& o : p.nodes) {
    json node = {{"match", o.match}, {"where", o.where}};
    add_settings(node, o.settings);
    j["nodes"].push_back(node);
  }
  j["monitor"] = monitor_json(p.monitor);
  j["watch"] = watch_json(p.watch);
  return j;
}

json profile_to_json(const ResolvedProfile& r) {
  json j = {{"name", r.name.empty() ? json(nullptr) : json(r.name)},
            {"reason", r.reason},
            {"files", r.files},
            {"node_override", or_null(r.node_override, text)}};
  j["rendezvous"] = rendezvous_json(r.port_range, r.host_suffix);
  j["preflight"] = preflight_json(r.preflight);
  const auto interfaces = r.socket_interfaces.empty()
                              ? std::nullopt
                              : std::optional<std::vector<std::string>>(r.socket_interfaces);
  j["network"] = network_json(interfaces, r.transport, r.hca, r.hca_list);
  j["binding"] = binding_json(r.bind);
  j["env"] = env_json(r.env);
  j["monitor"] = monitor_json(r.monitor);
  j["watch"] = watch_json(r.watch);
  return j;
}

}  // namespace ddp::plan
