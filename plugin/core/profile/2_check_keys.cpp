// The profile schema: which keys exist where, and what each value may be. Every check happens
// at the node that holds the value, so a message points at the line to fix.
#include <algorithm>
#include <cstdint>

#include "error.hpp"
#include "hostlist.hpp"
#include "parse.hpp"
#include "profile_detail.hpp"
#include "profile_rules.hpp"
#include "profile_yaml.hpp"
#include "sampler_args.hpp"
#include "watch_args.hpp"

namespace ddp::plan::profile_detail {
namespace {

using profile_rules::Refusal;
using profile_yaml::Field;
using profile_yaml::find;

std::string checked_value(const Field& f, std::optional<Refusal> (*rule)(const std::string&)) {
  const std::string value = f.text();
  if (const auto r = rule(value)) f.fail(f.key() + "=" + quoted(value) + " " + r->problem, r->fix);
  return value;
}

std::string checked_name(const Field& f) {
  const std::string value = f.text();
  try {
    check_profile_name(f.key(), value);
  } catch (const PlanError& e) {
    f.fail(e.what(), "write the name of a profile, as its file is named without .yaml");
  }
  return value;
}

// `listed` counts the hosts of the file's lists so far: together they stay within kMaxHosts. The
// lists stay text (hostlist_contains matches a node), so a file of long names cannot take
// slurmstepd's memory either.
std::string host_list(const Field& f, std::uint64_t& listed) {
  const std::string list = f.text();
  try {
    listed += check_hostlist(f.key(), list);
  } catch (const PlanError& e) {
    f.fail(e.what(), "write a Slurm host list, e.g. \"gn[001-060]\" or \"node01,node03\"");
  }
  if (listed > kMaxHosts)
    f.fail(f.key() + " brings the hosts this file's lists name to more than " +
               std::to_string(kMaxHosts) + ", more than any cluster has",
           "name each node in few lists; a profile for a whole cluster needs no nodes entry "
           "for every node");
  return list;
}

// A non-empty list of distinct values, each passing `rule`.
std::vector<std::string> names_of(const Field& f,
                                  std::optional<Refusal> (*rule)(const std::string&),
                                  const char* example) {
  std::vector<std::string> out;
  for (const Field& item : f.items()) {
    const std::string value = checked_value(item, rule);
    if (std::find(out.begin(), out.end(), value) != out.end())
      item.fail(item.key() + "=" + quoted(value) + " is listed twice", "list each name once");
    out.push_back(value);
  }
  if (out.empty())
    f.fail(f.key() + " is an empty list", std::string("list at least one, e.g. ") + f.name() +
                                              ": " + example + ", or delete the key");
  return out;
}

// One of a few words; `words` maps each to its value, `meanings` explains them for the message.
template <class T>
T choice(const Field& f, std::initializer_list<std::pair<const char*, T>> words,
         const char* meanings) {
  const std::string value = f.text();
  for (const auto& [word, result] : words)
    if (value == word) return result;
  std::string list;
  for (const auto& w : words) list += std::string(list.empty() ? "" : ", ") + w.first;
  f.fail(f.key() + "=" + quoted(value) + " is not allowed; allowed: " + meanings,
         "write one of " + list);
}

void parse_network(const Field& f, NodeSettings& s) {
  const auto e = f.entries({"socket_interfaces", "transport", "hca", "hca_list"});
  if (const auto x = find(e, "socket_interfaces"))
    s.socket_interfaces = names_of(*x, profile_rules::interface_name, "[ib0]");
  if (const auto x = find(e, "transport"))
    s.transport = choice<Transport>(
        *x, {{"ib", Transport::Ib}, {"ofi", Transport::Ofi}, {"socket", Transport::Socket}},
        "ib (NCCL over InfiniBand verbs), ofi (a libfabric plugin such as aws-ofi-nccl), "
        "socket (TCP)");
  const auto hca = find(e, "hca");
  if (hca)
    s.hca = choice<HcaMode>(
        *hca, {{"nearest", HcaMode::Nearest}, {"none", HcaMode::None}, {"list", HcaMode::List}},
        "nearest (the HCA closest to each GPU), none (NCCL's own choice), list (hca_list)");
  const auto list = find(e, "hca_list");
  if (s.hca == HcaMode::List && !list)
    hca->fail(hca->key() + ": list needs the HCAs", "add hca_list: [mlx5_0:1, ...] next to it");
  if (list && s.hca != HcaMode::List)
    list->fail_key(list->key() + " is read only with hca: list",
                   "set hca: list in the same network map, or delete hca_list");
  if (list) s.hca_list = names_of(*list, profile_rules::hca_entry, "[mlx5_0:1]");
}

void parse_binding(const Field& f, NodeSettings& s) {
  const auto e = f.entries({"cpus"});
  const auto cpus = find(e, "cpus");
  if (!cpus) f.fail(f.key() + " needs cpus", "write binding: {cpus: closest} or {cpus: none}");
  s.bind = choice<Bind>(*cpus, {{"closest", Bind::Closest}, {"none", Bind::None}},
                        "closest (cores next to the rank's GPU) or none");
}

ProfileVariable parse_variable(const Field& f) {
  if (const auto r = profile_rules::variable_name(f.name()))
    f.fail_key("variable " + quoted(f.name()) + " " + r->problem, r->fix);
  // Linux refuses to start a program with a variable over 128 KiB (E2BIG): every task would fail.
  constexpr std::size_t kMaxValue = 32 * 1024;
  const auto text = [&](const Field& v) {
    std::string s = v.text();
    if (s.size() > kMaxValue)
      v.fail("variable " + quoted(f.name()) + " is " + std::to_string(s.size()) +
                 " bytes long; a value may be at most " + std::to_string(kMaxValue) +
                 " bytes, and Linux starts no program with one over 128 KiB",
             "shorten the value; put long settings in a file and name the file");
    return s;
  };
  if (!f.is_map()) return {f.name(), text(f), false};
  const auto e = f.entries({"value", "force"});
  const auto value = find(e, "value");
  if (!value)
    f.fail(f.key() + " has no value", "write " + f.name() + ": {value: \"...\", force: true}");
  const auto force = find(e, "force");
  return {f.name(), text(*value), force && force->boolean()};
}

void parse_settings(const std::vector<Field>& e, NodeSettings& s) {
  if (const auto x = find(e, "network")) parse_network(*x, s);
  if (const auto x = find(e, "binding")) parse_binding(*x, s);
  if (const auto x = find(e, "env"))
    for (const Field& v : x->entries({})) s.env.push_back(parse_variable(v));
}

ProfileMatch parse_match(const Field& f, std::uint64_t& listed) {
  const auto e = f.entries({"cluster", "nodes"});
  ProfileMatch m;
  m.where = f.where();
  if (const auto x = find(e, "cluster")) m.cluster = checked_value(*x, profile_rules::cluster_name);
  if (const auto x = find(e, "nodes")) {
    m.nodes = host_list(*x, listed);
  }
  if (m.empty())
    f.fail(f.key() + " is empty and would match every node",
           "give cluster, nodes or both, or delete match so the profile is used only by name");
  return m;
}

void parse_rendezvous(const Field& f, Profile& p) {
  const auto e = f.entries({"port_range", "host_suffix"});
  if (const auto x = find(e, "port_range")) {
    const auto items = x->items();
    const char* example = "write port_range: [LOW, HIGH], e.g. [20000, 29999]";
    if (items.size() != 2) x->fail(x->key() + " must hold two ports, LOW and HIGH", example);
    const auto low = items[0].integer(1024, 65535);
    const auto high = items[1].integer(1024, 65535);
    if (high < low) x->fail(x->key() + " runs backwards", example);
    try {
      p.port_range = parse_port_range(x->key(), std::to_string(low) + "-" + std::to_string(high));
    } catch (const PlanError& e) {
      x->fail(e.what(), "keep both ends below 32768 or both above 60999, e.g. [20000, 29999]");
    }
  }
  if (const auto x = find(e, "host_suffix"))
    p.host_suffix = checked_value(*x, profile_rules::host_suffix);
}

void parse_preflight(const Field& f, PreflightSettings& p) {
  const auto e = f.entries(
      {"enabled", "min_busbw_gbps", "max_latency_us", "min_fraction_of_median", "timeout_s"});
  if (const auto x = find(e, "enabled")) p.enabled = x->boolean();
  if (const auto x = find(e, "min_busbw_gbps")) p.min_busbw_gbps = x->number(0.000001, 1e6);
  if (const auto x = find(e, "max_latency_us")) p.max_latency_us = x->number(0.001, 1e9);
  if (const auto x = find(e, "min_fraction_of_median"))
    p.min_fraction_of_median = x->number(0.000001, 1);
  if (const auto x = find(e, "timeout_s")) p.timeout_s = static_cast<unsigned>(x->integer(10, 3600));
}

void parse_monitor(const Field& f, MonitorDefaults& m) {
  const auto e = f.entries({"enabled", "interval", "dir"});
  if (const auto x = find(e, "enabled")) m.enabled = x->boolean();
  if (const auto x = find(e, "interval"))
    m.interval = static_cast<unsigned>(x->integer(monitor::kMinInterval, monitor::kMaxInterval));
  if (const auto x = find(e, "dir")) m.dir = checked_value(*x, profile_rules::monitor_dir);
}

void parse_watch(const Field& f, WatchDefaults& w) {
  const auto e = f.entries({"enabled", "timeout", "retries"});
  if (const auto x = find(e, "enabled")) w.enabled = x->boolean();
  if (const auto x = find(e, "timeout"))
    w.timeout = static_cast<unsigned>(x->integer(watch::kMinTimeout, watch::kMaxTimeout));
  if (const auto x = find(e, "retries"))
    w.retries = static_cast<unsigned>(x->integer(0, watch::kMaxRetries));
}

NodeOverride parse_override(const Field& f, std::uint64_t& listed) {
  const auto e = f.entries({"match", "network", "binding", "env"});
  const auto match = find(e, "match");
  if (!match)
    f.fail(f.key() + " has no match", "add match: \"HOSTLIST\" naming the nodes it is for");
  if (e.size() == 1)
    f.fail(f.key() + " changes nothing", "give network, binding or env, or delete the entry");
  NodeOverride o;
  o.match = host_list(*match, listed);
  o.where = f.where();
  parse_settings(e, o.settings);
  return o;
}

}  // namespace

ProfileFile parse_profile_file(const std::string& path) {
  return parse_profile_text(path, profile_yaml::read_profile_text(path));
}

ProfileFile parse_profile_text(const std::string& path, const std::string& text) {
  const auto named = stem_of(path);
  if (!named)
    throw PlanError(path +
                    ": is not named NAME.yaml. Fix: rename it to NAME.yaml, where NAME is "
                    "the value of its name: key");
  const std::string& stem = *named;
  const Field root = Field::root(path, profile_yaml::read_document(path, text));
  const auto e = root.entries({"name", "description", "extends", "match", "rendezvous", "network",
                               "binding", "env", "preflight", "nodes", "monitor",
                               "watch"});
  ProfileFile file;
  Profile& p = file.profile;
  p.files = {path};
  const auto name = find(e, "name");
  if (!name) root.fail("the profile has no name", "add `name: " + stem + "` as its first line");
  p.name = checked_name(*name);
  if (p.name != stem)
    name->fail("name=" + quoted(p.name) + " differs from the file's name " + quoted(stem + ".yaml"),
               "write name: " + stem + ", or rename the file to " + p.name + ".yaml");
  if (const auto x = find(e, "description")) p.description = x->text();
  if (const auto x = find(e, "extends")) {
    file.extends = checked_name(*x);
    file.extends_where = x->where();
  }
  std::uint64_t listed = 0;
  if (const auto x = find(e, "match")) p.match = parse_match(*x, listed);
  if (const auto x = find(e, "rendezvous")) parse_rendezvous(*x, p);
  if (const auto x = find(e, "preflight")) parse_preflight(*x, p.preflight);
  parse_settings(e, p.settings);
  if (const auto x = find(e, "monitor")) parse_monitor(*x, p.monitor);
  if (const auto x = find(e, "watch")) parse_watch(*x, p.watch);
  if (const auto x = find(e, "nodes")) {
    file.has_nodes = true;
    for (const Field& item : x->items()) p.nodes.push_back(parse_override(item, listed));
  }
  return file;
}

}  // namespace ddp::plan::profile_detail
