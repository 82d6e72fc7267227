#include "planner.hpp"

#include <algorithm>
#include <sstream>

#include "error.hpp"
#include "hostlist.hpp"
#include "node_list.hpp"
#include "parse.hpp"
#include "version.hpp"
#include "visible_devices.hpp"

namespace ddp::plan {
namespace {

std::string plural(unsigned n, const char* word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

std::string asked(const UserOptions& o) {
  std::string out;
  if (o.nodes) out += "--ddp-nodes=" + std::to_string(*o.nodes);
  if (o.gpus_per_node) out += std::string(out.empty() ? "" : " ") + "--ddp-gpus=" +
                              std::to_string(*o.gpus_per_node);
  return out;
}

}  // namespace

std::string shape_fix_hint(const UserOptions& o, bool job_has_shape) {
  if (job_has_shape)
    return "the job's allocation has that shape, this step alone differs: run it as a plain step "
           "with srun --ddp=off, or as a DDP step of its own shape with srun --ddp";
  const std::string n = o.nodes ? std::to_string(*o.nodes) : "N";
  const std::string g = o.gpus_per_node ? std::to_string(*o.gpus_per_node) : "G";
  return "ask the admin to enable the slurm-ddp cli_filter (CliFilterPlugins=cli_filter/lua with "
         "the shipped cli_filter.lua), or request the shape yourself: --nodes=" + n +
         " --ntasks-per-node=" + g + " --gpus-per-node=" + g;
}

StepPlan plan_step(const StepFacts& facts, const UserOptions& options,
                   const PlugstackConfig& config, const ResolvedProfile& profile) {
  if (facts.nodes == 0 || facts.node_id >= facts.nodes)
    throw PlanError("step facts are inconsistent: node index " + std::to_string(facts.node_id) +
                    " in a step of " + plural(facts.nodes, "node"));
  if (facts.local_tasks == 0 || facts.total_tasks < facts.local_tasks)
    throw PlanError("step facts are inconsistent: " + plural(facts.local_tasks, "local task") +
                    " in a step of " + plural(facts.total_tasks, "task"));
  if (options.nodes && *options.nodes != facts.nodes)
    throw StepWideError(asked(options) + " asked for " + plural(*options.nodes, "node") +
                    ", but this step runs on " + plural(facts.nodes, "node") + " (" +
                    quoted_list(facts.nodelist) + "). Fix: " + shape_fix_hint(options, facts.job_has_shape));
  if (options.gpus_per_node && *options.gpus_per_node != facts.local_tasks)
    throw PlanError(asked(options) + " asked for one task per GPU, " +
                    plural(*options.gpus_per_node, "task") + " per node, but node " +
                    facts.hostname + " runs " + plural(facts.local_tasks, "task") +
                    " of this step. Fix: " + shape_fix_hint(options, facts.job_has_shape));

  StepPlan plan;
  plan.facts = facts;
  plan.options = options;
  plan.profile = profile;
  plan.monitor = plan_monitor(options, profile);
  plan.watch = plan_watch(options, profile, facts);
  // The failure watch names the node a new attempt goes without: no watch, nothing to retry.
  // The command line's --ddp-watch=off is every node's; a profile may differ from node to node.
  if (!plan.watch && options.retries.value_or(0) > 0) {
    const std::string why = "--" + std::string(kOptRetries) + "=" + std::to_string(*options.retries) +
                            " needs the failure watch, and --" + kOptWatch + "=off or the profile's " +
                            "watch.enabled: false turns it off; drop one of the two";
    if (options.watch && !options.watch->on) throw StepWideError(why);
    throw PlanError(why);
  }
  // The profile may name the head node's interface for rendezvous (e.g. its IB host name).
  plan.master_addr = first_host("SLURM_STEP_NODELIST", facts.nodelist) +
                     profile.host_suffix.value_or("");
  plan.port_range = profile.port_range.value_or(config.port_range);
  plan.port = choose_port(facts.job_id, facts.step_id, facts.resv_ports, options.port, plan.port_range);
  return plan;
}

NodePlacement place_node(const StepPlan& step, const GpuFacts& gpus) {
  const StepFacts& f = step.facts;
  PlacementRequest req;
  req.step_gpus = gpus.step_gpus;
  req.local_tasks = f.local_tasks;
  req.allowed_cpus = f.allowed_cpus;
  req.cpu_grant_problem = f.cpu_grant_problem;
  req.bind = step.options.bind.value_or(step.profile.bind.value_or(Bind::Closest));
  req.preferred_interfaces = step.profile.socket_interfaces;
  if (f.topology) return place_ranks(*f.topology, f.net, req);
  // Without a topology: no GPU locality, but still a fair split of the step's CPUs.
  Topology bare;
  bare.source = "no topology";
  bare.cpus = f.allowed_cpus;
  req.step_gpus.clear();
  NodePlacement placement = place_ranks(bare, f.net, req);
  // A GPU step without topology loses its locality; a CPU step loses nothing worth a warning.
  if (!gpus.step_gpus.empty())
    placement.warnings.insert(
        placement.warnings.begin(),
        (f.topology_problem.empty() ? std::string("no node topology was loaded")
                                    : f.topology_problem) +
            "; GPU-local NICs and cores are not used and NCCL chooses its NICs itself");
  return placement;
}

void check_node_gpus(const StepPlan& step, const GpuFacts& gpus) {
  const StepFacts& f = step.facts;
  const UserOptions& o = step.options;
  const auto ngpus = static_cast<unsigned>(gpus.step_gpus.size());
  if (o.gpus_per_node && ngpus != *o.gpus_per_node)
    throw PlanError(asked(o) + " asked for " + plural(*o.gpus_per_node, "GPU") +
                    " per node, but Slurm gave this step " + plural(ngpus, "GPU") + " on node " +
                    f.hostname + " (SLURM_STEP_GPUS=" + join(gpus.step_gpus) +
                    "). Fix: " + shape_fix_hint(o, f.job_has_shape));

  // NCCL needs a GPU per rank; without one each, the default is Gloo. Only an explicit
  // --ddp-backend=nccl that cannot work is an error.
  const bool gpu_per_task = ngpus > 0 && ngpus >= f.local_tasks;
  if (o.backend == contract::Backend::Nccl && !gpu_per_task)
    throw PlanError("the nccl backend needs one GPU per task, but node " + f.hostname + " runs " +
                    plural(f.local_tasks, "task") + " with " + plural(ngpus, "GPU") +
                    ". Fix: request GPUs (--ddp-gpus=G, or --gpus-per-node=G with "
                    "--ntasks-per-node=G), or use --ddp-backend=gloo for CPU training");
}

TaskPlan plan_task(const StepPlan& step, const TaskFacts& task, const GpuFacts& gpus,
                   const NodePlacement& placement) {
  const StepFacts& f = step.facts;
  const UserOptions& o = step.options;
  if (task.local_id >= f.local_tasks || task.global_id >= f.total_tasks)
    throw PlanError("task " + std::to_string(task.global_id) + " (local " +
                    std::to_string(task.local_id) + ") lies outside a step of " +
                    plural(f.total_tasks, "task") + ", " + std::to_string(f.local_tasks) +
                    " on this node");
  check_node_gpus(step, gpus);
  const auto ngpus = static_cast<unsigned>(gpus.step_gpus.size());
  const bool gpu_per_task = ngpus > 0 && ngpus >= f.local_tasks;
  const contract::Backend backend =
      o.backend.value_or(gpu_per_task ? contract::Backend::Nccl : contract::Backend::Gloo);

  TaskPlan plan;
  contract::TaskContract& c = plan.contract;
  c.rank = task.global_id;
  c.local_rank = task.local_id;
  c.world_size = f.total_tasks;
  c.local_world_size = f.local_tasks;
  c.node_rank = f.node_id;
  c.nodes = f.nodes;
  c.master_addr = step.master_addr;
  c.master_port = step.port.port;
  c.backend = backend;
  c.run_id = std::to_string(f.job_id) + "." + std::to_string(f.step_id);
  c.restart_count = f.restart_count;
  if (task.local_id < ngpus) plan.gpu = gpus.step_gpus[task.local_id];
  plan.omp_threads = std::max(1u, f.cpus_on_node / f.local_tasks);
  if (task.local_id < placement.ranks.size()) {
    const RankPlacement& where = placement.ranks[task.local_id];
    plan.cpus = where.cpus;
    if (!plan.cpus.empty()) plan.omp_threads = static_cast<unsigned>(plan.cpus.size());
    if (where.gpu && f.topology) plan.gpu_busid = f.topology->gpus[*where.gpu].busid;
    if (where.nic && f.topology) {
      plan.nic = f.topology->nics[where.nic->nic].name + ":" + std::to_string(where.nic->port);
      plan.nic_path = path_type_name(where.nic->path);
    }
  }

  for (auto& [name, value] : c.to_env()) plan.env.push_back({name, value, true});
  plan.env.push_back({contract::kDdpPortSource, port_source_name(step.port.source), true});
  plan.env.push_back({contract::kDdpLauncher, std::string("spank_ddp ") + kVersion, true});
  if (ngpus > 0) {
    plan.env.push_back({contract::kDdpStepGpus, join(gpus.step_gpus), true});
    if (plan.gpu) plan.env.push_back({contract::kDdpGpu, std::to_string(*plan.gpu), true});
    // cuda:LOCAL_RANK must be the rank's GPU, as under torchrun (visible_devices.hpp).
    if (auto visible = task_visible_devices(gpus, task))
      plan.env.push_back({contract::kCudaVisibleDevices, *visible, true});
  }
  if (!plan.gpu_busid.empty()) plan.env.push_back({contract::kDdpGpuBusId, plan.gpu_busid, true});
  if (!plan.cpus.empty()) plan.env.push_back({contract::kDdpCpus, format_cpu_list(plan.cpus), true});
  // A user's own NCCL settings win over the topology's guess. NCCL_IB_HCA means nothing to the
  // OFI (Slingshot) and socket transports, and a profile may list the HCAs itself or forbid it.
  const ResolvedProfile& prof = step.profile;
  const bool ib_transport = !prof.transport || *prof.transport == Transport::Ib;
  const HcaMode hca_mode = prof.hca.value_or(HcaMode::Nearest);
  if (!plan.nic.empty()) plan.env.push_back({contract::kDdpNic, plan.nic + " " + plan.nic_path, true});
  if (ib_transport && hca_mode == HcaMode::Nearest && !plan.nic.empty())
    plan.env.push_back({contract::kNcclIbHca, "=" + plan.nic, false});
  if (ib_transport && hca_mode == HcaMode::List && !prof.hca_list.empty()) {
    std::string list;
    for (const auto& h : prof.hca_list) list += (list.empty() ? "" : ",") + h;
    plan.env.push_back({contract::kNcclIbHca, "=" + list, false});
  }
  if (placement.socket_interface) {
    plan.env.push_back({contract::kNcclSocketIfname, "=" + *placement.socket_interface, false});
    plan.env.push_back({contract::kGlooSocketIfname, *placement.socket_interface, false});
  }
  plan.env.push_back({contract::kDdpProfile, prof.name.empty() ? "none" : prof.name, true});
  if (f.store_key) plan.env.push_back({contract::kDdpStoreKey, *f.store_key, true});
  for (const auto& v : prof.env) plan.env.push_back({v.name, v.value, v.forced});
  // After the profile's: a site's value for these beats torchrun's default, a user's beats both.
  for (auto& [name, value] : contract::torchrun_defaults()) plan.env.push_back({name, value, false});
  if (step.watch) {
    plan.watch_timeout = step.watch->timeout;
    plan.retries = step.watch->retries;
    plan.env.push_back({contract::kDdpWatch, std::to_string(step.watch->timeout), true});
    if (!step.watch->error_dir.empty())
      plan.env.push_back({contract::kTorchelasticErrorFile,
                          watch::error_file(step.watch->error_dir, c.rank), true});
  }
  // nvidia-smi, NCCL and Slurm number GPUs by PCI bus id; CUDA's default (fastest first) would
  // make cuda:LOCAL_RANK a different GPU than the one Slurm and the plan name.
  plan.env.push_back({contract::kCudaDeviceOrder, "PCI_BUS_ID", false});
  plan.env.push_back({contract::kOmpNumThreads, std::to_string(plan.omp_threads), false});
  return plan;
}

std::vector<TaskPlan> plan_node(const StepPlan& step, const GpuFacts& gpus,
                                const NodePlacement& placement,
                                const std::optional<std::string>& task_visible) {
  std::vector<TaskPlan> plans;
  const StepFacts& f = step.facts;
  const std::optional<std::string>& visible = task_visible ? task_visible : gpus.visible;
  for (unsigned i = 0; i < f.local_tasks; ++i)
    plans.push_back(plan_task(step, {i, f.node_id * f.local_tasks + i, visible}, gpus, placement));
  return plans;
}

std::string TaskPlan::summary() const {
  std::ostringstream s;
  s << "rank " << contract.rank << "/" << contract.world_size << " local "
    << contract.local_rank << "/" << contract.local_world_size << " node " << contract.node_rank
    << "/" << contract.nodes << " master " << contract.master_addr << ":" << contract.master_port
    << " backend " << contract::backend_name(contract.backend) << " gpu "
    << (gpu ? std::to_string(*gpu) : std::string("none"));
  if (!gpu_busid.empty()) s << " (" << gpu_busid << ")";
  if (!nic.empty()) s << " nic " << nic << " " << nic_path;
  s << " cpus " << (cpus.empty() ? std::string("unbound") : format_cpu_list(cpus)) << " omp "
    << omp_threads << " run " << contract.run_id << " restarts " << contract.restart_count
    << " watch " << (watch_timeout ? std::to_string(*watch_timeout) + "s" : std::string("off"));
  if (retries != 0) s << " retries " << retries;
  return s.str();
}

}  // namespace ddp::plan
