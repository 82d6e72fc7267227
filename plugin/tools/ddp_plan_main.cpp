// ddp-plan: prints the plan spank_ddp would apply on one node, from given step facts, so admins
// can see and debug it without submitting a job. Same planner, same validation as the plugin.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "core_grant.hpp"
#include "error.hpp"
#include "hostlist.hpp"
#include "options.hpp"
#include "parse.hpp"
#include "local_host.hpp"
#include "plan_report.hpp"
#include "planner.hpp"
#include "profile.hpp"
#include "profile_choice.hpp"
#include "profile_json.hpp"
#include "net_facts.hpp"
#include "topology.hpp"
#include "version.hpp"

namespace {

namespace p = ddp::plan;

struct Args {
  std::optional<std::string> topology;
  std::string gpus;
  std::string tasks = "1";
  std::string nodes = "1";
  std::string node_id = "0";
  std::optional<std::string> nodelist;
  std::string job_id = "0";
  std::string step_id = "0";
  std::string restart_count = "0";
  std::optional<std::string> resv_ports;
  std::optional<std::string> cpus;
  std::optional<std::string> cuda_visible_devices;
  std::optional<std::string> step_visible_devices;
  std::optional<std::string> cpus_allowed;
  std::optional<std::string> alloc_cores;
  std::vector<std::string> net_up;
  std::vector<std::string> plugstack;
  std::optional<std::string> profile;
  std::optional<std::string> check_profile;
  std::optional<std::string> cluster;
  std::vector<std::pair<const char*, std::optional<std::string>>> user_options;
  bool json = false;
  bool explain = false;
};

std::string this_host() { return p::local_host_name().value_or("localhost"); }

// What Slurm would count for a step on these cores: their hardware threads (CR_Core), or without
// core ids every allowed CPU. Ids beyond the topology count nothing; the grant reports them.
unsigned default_step_cpus(const p::Topology& topo, const std::optional<std::string>& alloc_cores,
                           const p::CpuList& affinity) {
  if (!alloc_cores) return static_cast<unsigned>(affinity.size());
  std::size_t threads = 0;
  for (unsigned id : p::parse_index_list("--alloc-cores", *alloc_cores, 65535))
    if (id < topo.cores.size()) threads += topo.cores[id].size();
  return static_cast<unsigned>(std::max<std::size_t>(threads, 1));
}

// A profile argument is a file when it looks like a path, otherwise a name in the profile dir. A
// file is made absolute, since the plugin's rule (--ddp-profile) takes only absolute paths.
p::UserOptions profile_option(const std::string& argument) {
  p::UserOptions options;
  const bool path = argument.find('/') != std::string::npos;
  p::apply_user_option(
      options, p::kOptProfile,
      path ? std::filesystem::absolute(argument).lexically_normal().string() : argument);
  return options;
}

// The plugin's choice (core/profile/5_choose.cpp), with the admin's own files allowed: whoever runs
// ddp-plan reads their own files with their own rights.
p::ProfileChoice choose(const Args& a, p::PlugstackConfig config, const std::string& host) {
  config.user_profiles = true;
  return p::choose_profile(a.profile ? profile_option(*a.profile) : p::UserOptions{}, config,
                           a.cluster, host, p::load_profile_file);
}

int check_profile(const std::string& what, const p::PlugstackConfig& config) {
  const p::UserOptions options = profile_option(what);
  const p::Profile profile = options.profile_file
                                 ? p::load_profile_file(*options.profile_file)
                                 : p::load_profile(config.profile_dir, *options.profile);
  std::cout << p::profile_to_json(profile).dump(2) << "\n";
  std::fprintf(stderr, "ddp-plan: profile %s is valid\n", profile.name.c_str());
  return 0;
}

int run(const Args& a) {
  const p::PlugstackConfig config = p::parse_plugstack_args(a.plugstack);
  if (a.check_profile) return check_profile(*a.check_profile, config);
  p::StepFacts f;
  f.nodes = static_cast<unsigned>(p::parse_unsigned("--nodes", a.nodes, 1, p::kMaxNodes));
  f.node_id = static_cast<unsigned>(p::parse_unsigned("--node-id", a.node_id, 0, f.nodes - 1));
  f.local_tasks = static_cast<unsigned>(p::parse_unsigned("--tasks", a.tasks, 1, 4096));
  f.total_tasks = f.nodes * f.local_tasks;
  f.job_id = static_cast<std::uint32_t>(p::parse_unsigned("--job-id", a.job_id, 0, UINT32_MAX));
  f.step_id = static_cast<std::uint32_t>(p::parse_unsigned("--step-id", a.step_id, 0, UINT32_MAX));
  f.resv_ports = a.resv_ports;
  f.restart_count = static_cast<unsigned>(p::parse_unsigned("--restart-count", a.restart_count, 0, UINT32_MAX));
  // srun makes the error file directory's nonce per step; the shape is what matters here.
  f.watch_nonce = "NONCE";
  if (a.nodelist) {
    f.nodelist = *a.nodelist;
  } else if (f.nodes == 1) {
    f.nodelist = this_host();
  } else {
    throw p::PlanError("--nodes=" + a.nodes + " needs --nodelist LIST (the step's nodes, "
                       "e.g. node[1-" + a.nodes + "]) to name MASTER_ADDR");
  }
  const auto hosts = p::expand_hostlist("--nodelist", f.nodelist);
  if (hosts.size() != f.nodes)
    throw p::PlanError("--nodelist names " + std::to_string(hosts.size()) + " hosts but --nodes=" +
                       a.nodes);
  f.hostname = hosts[f.node_id];
  f.topology = p::load_topology(a.topology);
  // Planning for this machine: the CPUs this shell may use, as slurmstepd's own affinity is.
  p::CpuList affinity = a.cpus_allowed
                           ? p::parse_index_list("--cpus-allowed", *a.cpus_allowed, p::kMaxCpuId)
                       : a.topology ? f.topology->cpus
                                    : p::process_affinity();
  std::sort(affinity.begin(), affinity.end());
  f.alloc_cores = a.alloc_cores;
  f.cpus_on_node = a.cpus ? static_cast<unsigned>(p::parse_unsigned("--cpus", *a.cpus, 1, 1u << 20))
                          : default_step_cpus(*f.topology, a.alloc_cores, affinity);
  p::apply_core_grant(f, affinity);
  // The live machine's interfaces only mean something when planning for this machine.
  if (!a.topology) f.net = p::read_net_facts();
  for (const auto& name : a.net_up) f.net.interfaces.push_back({name, true, false, true});

  p::UserOptions options;
  for (const auto& [name, value] : a.user_options)
    if (value) p::apply_user_option(options, name, *value);

  p::GpuFacts gpus;
  gpus.step_gpus = p::parse_index_list("--gpus", a.gpus, p::kMaxGpuIndex);
  gpus.visible = a.step_visible_devices;
  if (!gpus.visible && !gpus.step_gpus.empty()) gpus.visible = p::join(gpus.step_gpus);

  const p::ProfileChoice choice = choose(a, config, f.hostname);
  const p::StepPlan step = p::plan_step(f, options, config, p::resolve_for_node(choice, f.hostname));
  const p::NodePlacement placement = p::place_node(step, gpus);
  const std::vector<p::TaskPlan> tasks =
      p::plan_node(step, gpus, placement, a.cuda_visible_devices);
  if (a.json)
    std::cout << ddp::tools::plan_to_json(step, placement, tasks).dump(2) << "\n";
  else
    std::cout << ddp::tools::plan_to_table(step, placement, tasks);
  if (a.explain && !a.json)
    std::cout << ddp::tools::plan_explain(step, placement, tasks, gpus, a.cuda_visible_devices);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Print the DDP plan spank_ddp would apply on one node of a step."};
  app.set_version_flag("--version", std::string("ddp-plan ") + p::kVersion);
  Args a;
  // Counts are read as text and validated by the planner's own parsers, so ddp-plan and the
  // plugin reject the same values with the same words.
  app.add_option("--topology", a.topology, "hwloc XML of the node (default: this machine)");
  app.add_option("--gpus", a.gpus, "Slurm GPU indices given to the step on this node, e.g. 0,1,2,3");
  app.add_option("--tasks", a.tasks, "tasks of the step on this node")->capture_default_str();
  app.add_option("--nodes", a.nodes, "nodes in the step")->capture_default_str();
  app.add_option("--node-id", a.node_id, "this node's index in the step")->capture_default_str();
  app.add_option("--nodelist", a.nodelist, "the step's node list (Slurm syntax)");
  app.add_option("--job-id", a.job_id, "job id")->capture_default_str();
  app.add_option("--step-id", a.step_id, "step id")->capture_default_str();
  app.add_option("--restart-count", a.restart_count,
                 "how often Slurm requeued the job (TORCHELASTIC_RESTART_COUNT)")->capture_default_str();
  app.add_option("--resv-ports", a.resv_ports, "SLURM_STEP_RESV_PORTS of the step");
  app.add_option("--cpus", a.cpus, "CPUs the step holds on this node (default: all allowed)");
  app.add_option("--cpus-allowed", a.cpus_allowed,
                 "slurmstepd's CPUs on this node (its cgroup cpuset), e.g. 0-15 (default: all in "
                 "the topology); without --alloc-cores these are the step's CPUs");
  app.add_option("--alloc-cores", a.alloc_cores,
                 "Slurm's core ids of the step on this node, e.g. 0-1,4 (S_STEP_ALLOC_CORES; "
                 "`scontrol show job -d` lists a job's as CPU_IDs on CR_Core nodes without SMT)");
  app.add_option("--net-up", a.net_up,
                 "an interface to treat as up with an address (repeatable; with --topology "
                 "this machine's interfaces are not looked at)");
  app.add_option("--cuda-visible-devices", a.cuda_visible_devices,
                 "CUDA_VISIBLE_DEVICES as Slurm set it in each task, when it bound each to some "
                 "GPUs (--gpus-per-task, --gpu-bind); default: the step's");
  app.add_option("--step-visible-devices", a.step_visible_devices,
                 "CUDA_VISIBLE_DEVICES as Slurm set it for the step (default: the --gpus list, as "
                 "without ConstrainDevices; 0..n-1 with it)");
  app.add_option("--plugstack", a.plugstack, "plugstack.conf argument key=value (repeatable)");
  a.user_options = {{p::kOptNodes, {}}, {p::kOptGpus, {}},    {p::kOptPort, {}},
                    {p::kOptBackend, {}}, {p::kOptBind, {}}, {p::kOptWatch, {}},
                    {p::kOptRetries, {}}};
  for (auto& [name, value] : a.user_options)
    app.add_option(std::string("--") + name, value, std::string("as the srun option --") + name);
  app.add_option("--profile", a.profile,
                 "profile NAME (in the profile directory) or FILE; default: the plugstack "
                 "default_profile, else the profile matching --cluster and the node");
  app.add_option("--cluster", a.cluster, "SLURM_CLUSTER_NAME, for automatic profile matching");
  app.add_option("--check-profile", a.check_profile,
                 "validate profile NAME or FILE and print it resolved (extends applied)");
  app.add_flag("--json", a.json, "print JSON instead of a table");
  app.add_flag("--explain", a.explain,
               "after the table, say per GPU how it was matched (Slurm index, hwloc bus-id order, "
               "CUDA_VISIBLE_DEVICES)");
  CLI11_PARSE(app, argc, argv);
  try {
    return run(a);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ddp-plan: error: %s\n", e.what());
    return 1;
  }
}
