#include "plan_report.hpp"

#include "parse.hpp"
#include "visible_devices.hpp"

#include <iomanip>
#include <sstream>

namespace ddp::tools {
namespace {

nlohmann::json optional_text(const std::string& s) {
  return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(s);
}

}  // namespace

nlohmann::json plan_to_json(const plan::StepPlan& step, const plan::NodePlacement& placement,
                            const std::vector<plan::TaskPlan>& tasks) {
  const plan::StepFacts& f = step.facts;
  nlohmann::json j;
  j["step"] = {{"job_id", f.job_id},           {"step_id", f.step_id},
               {"nodes", f.nodes},             {"node_id", f.node_id},
               {"nodelist", f.nodelist},       {"tasks", f.total_tasks},
               {"local_tasks", f.local_tasks}, {"cpus", f.cpus_on_node},
               {"master_addr", step.master_addr}, {"master_port", step.port.port},
               {"port_source", plan::port_source_name(step.port.source)}};
  j["step"]["alloc_cores"] = f.alloc_cores ? nlohmann::json(*f.alloc_cores) : nlohmann::json(nullptr);
  // null when Slurm's core ids could not be mapped: tasks keep Slurm's own binding.
  j["step"]["step_cpus"] = f.cpu_grant_problem.empty()
                               ? nlohmann::json(plan::format_cpu_list(f.allowed_cpus))
                               : nlohmann::json(nullptr);
  j["topology"] = f.topology ? nlohmann::json{{"source", f.topology->source},
                                              {"gpus", f.topology->gpus.size()},
                                              {"nics", f.topology->nics.size()},
                                              {"cpus", f.topology->cpus.size()},
                                              {"load_ms", f.topology->load_ms}}
                             : nlohmann::json(nullptr);
  j["profile"] = {{"name", step.profile.name.empty() ? nlohmann::json(nullptr)
                                                     : nlohmann::json(step.profile.name)},
                  {"reason", step.profile.reason}};
  j["socket_interface"] = placement.socket_interface ? nlohmann::json(*placement.socket_interface)
                                                     : nlohmann::json(nullptr);
  j["socket_interface_reason"] = placement.socket_interface_reason;
  j["warnings"] = placement.warnings;
  j["watch"] = step.watch ? nlohmann::json{{"timeout", step.watch->timeout},
                                           {"hung_timeout", step.watch->hung_timeout},
                                           {"reason", step.watch->reason},
                                           {"retries", step.watch->retries},
                                           {"error_dir", optional_text(step.watch->error_dir)}}
                          : nlohmann::json(nullptr);
  j["tasks"] = nlohmann::json::array();
  for (const auto& t : tasks) {
    nlohmann::json env = nlohmann::json::object();
    for (const auto& e : t.env) env[e.name] = e.value;
    j["tasks"].push_back({{"rank", t.contract.rank},
                          {"local_rank", t.contract.local_rank},
                          {"gpu", t.gpu ? nlohmann::json(*t.gpu) : nlohmann::json(nullptr)},
                          {"gpu_busid", optional_text(t.gpu_busid)},
                          {"nic", optional_text(t.nic)},
                          {"path", optional_text(t.nic_path)},
                          {"cpus", optional_text(plan::format_cpu_list(t.cpus))},
                          {"backend", contract::backend_name(t.contract.backend)},
                          {"omp_threads", t.omp_threads},
                          {"env", env}});
  }
  return j;
}

std::string plan_to_table(const plan::StepPlan& step, const plan::NodePlacement& placement,
                          const std::vector<plan::TaskPlan>& tasks) {
  const plan::StepFacts& f = step.facts;
  std::ostringstream s;
  s << "step " << f.job_id << "." << f.step_id << ": node " << f.node_id << " of " << f.nodes
    << " (" << f.nodelist << "), " << f.local_tasks << " of " << f.total_tasks << " tasks here\n"
    << "rendezvous " << step.master_addr << ":" << step.port.port << " (port "
    << plan::port_source_name(step.port.source) << ")\n";
  s << "profile " << (step.profile.name.empty() ? "none" : step.profile.name) << " ("
    << step.profile.reason << ")\n";
  if (f.topology)
    s << "topology " << f.topology->source << ": " << f.topology->gpus.size() << " GPUs, "
      << f.topology->nics.size() << " NICs, " << f.topology->cpus.size() << " CPUs (loaded in "
      << std::fixed << std::setprecision(1) << f.topology->load_ms << " ms)\n";
  if (f.alloc_cores)
    s << "Slurm's cores " << *f.alloc_cores << ": "
      << (f.cpu_grant_problem.empty() ? "CPUs " + plan::format_cpu_list(f.allowed_cpus)
                                      : std::string("not mapped, tasks keep Slurm's binding"))
      << "\n";
  s << "socket interface "
    << (placement.socket_interface ? *placement.socket_interface + " (" +
                                         placement.socket_interface_reason + ")"
                                   : std::string("none: NCCL and Gloo choose"))
    << "\n";
  s << "torchrun variables: TORCHELASTIC_RUN_ID=" << f.job_id << "." << f.step_id
    << " TORCHELASTIC_RESTART_COUNT=" << f.restart_count
    << " TORCHELASTIC_MAX_RESTARTS=0 GROUP_WORLD_SIZE=" << f.nodes
    << " ROLE_RANK=RANK ROLE_WORLD_SIZE=" << f.total_tasks
    << "; unless set: ROLE_NAME=default TORCH_NCCL_ASYNC_ERROR_HANDLING=1 "
       "NCCL_ASYNC_ERROR_HANDLING=1\n";
  if (step.watch)
    s << "failure watch: " << step.watch->timeout << " s, state D " << step.watch->hung_timeout
      << " s (" << step.watch->reason << "), head "
      << step.master_addr << " UDP port " << step.port.port << "; error files "
      << (step.watch->error_dir.empty() ? std::string("none") : step.watch->error_dir + "/rank-R.json")
      << "; retries "
      << (step.watch->retries == 0
              ? std::string("none")
              : std::to_string(step.watch->retries) + " (the job is requeued without a node the "
                                                       "watch or the preflight names)")
      << "\n";
  else
    s << "failure watch: off\n";
  for (const auto& w : placement.warnings) s << "warning: " << w << "\n";
  s << "\n"
    << std::left << std::setw(6) << "RANK" << std::setw(7) << "LOCAL" << std::setw(5) << "GPU"
    << std::setw(15) << "BUS ID" << std::setw(12) << "NIC" << std::setw(6) << "PATH"
    << std::setw(9) << "BACKEND" << std::setw(5) << "OMP" << "CPUS\n";
  for (const auto& t : tasks)
    s << std::setw(6) << t.contract.rank << std::setw(7) << t.contract.local_rank << std::setw(5)
      << (t.gpu ? std::to_string(*t.gpu) : std::string("-")) << std::setw(15)
      << (t.gpu_busid.empty() ? "-" : t.gpu_busid) << std::setw(12)
      << (t.nic.empty() ? "-" : t.nic) << std::setw(6) << (t.nic_path.empty() ? "-" : t.nic_path)
      << std::setw(9) << contract::backend_name(t.contract.backend) << std::setw(5)
      << t.omp_threads << (t.cpus.empty() ? "unbound" : plan::format_cpu_list(t.cpus)) << "\n";
  return s.str();
}

std::string plan_explain(const plan::StepPlan& step, const plan::NodePlacement& placement,
                         const std::vector<plan::TaskPlan>& tasks, const plan::GpuFacts& gpus,
                         const std::optional<std::string>& task_visible) {
  std::ostringstream out;
  const plan::Topology* topo = step.facts.topology ? &*step.facts.topology : nullptr;
  out << "\nGPU matching: Slurm's GPU indices follow gres.conf, which is PCI bus-id order for "
         "File=/dev/nvidia[0-N] and AutoDetect=nvml; local rank i drives the i-th GPU of "
         "SLURM_STEP_GPUS="
      << (gpus.step_gpus.empty() ? std::string("(none)") : plan::join(gpus.step_gpus)) << ", "
      << (topo ? std::to_string(topo->gpus.size()) + " GPU(s) found by hwloc in bus-id order"
               : std::string("no topology loaded"))
      << "\n";
  if (!gpus.step_gpus.empty())
    out << "  the step's CUDA_VISIBLE_DEVICES=" << gpus.visible.value_or("unset") << ", numbering "
        << plan::gpu_numbering_text(plan::gpu_numbering(gpus)) << "\n";
  for (const auto& t : tasks) {
    const unsigned local = t.contract.local_rank;
    out << "  local rank " << local << ": ";
    if (!t.gpu) {
      out << "no GPU (" << (gpus.step_gpus.empty() ? "the step has none" : "more ranks than GPUs")
          << ")\n";
      continue;
    }
    out << "Slurm GPU " << *t.gpu << " (entry " << local << " of SLURM_STEP_GPUS)";
    const auto& where = local < placement.ranks.size() ? placement.ranks[local].gpu
                                                       : std::optional<std::size_t>();
    if (topo && where) {
      const plan::Gpu& g = topo->gpus[*where];
      out << " = hwloc GPU " << *where << " of " << topo->gpus.size() << ", bus id " << g.busid
          << std::hex << std::setfill('0') << " (PCI " << std::setw(4) << g.vendor_id << ":"
          << std::setw(4) << g.device_id << std::dec << std::setfill(' ')
          << (g.name.empty() ? std::string() : ", " + g.name) << ")";
    } else {
      out << " = not matched to hwloc (see the warnings): no GPU-local NIC or cores";
    }
    const std::optional<std::string>& slurms = task_visible ? task_visible : gpus.visible;
    std::string visible = slurms.value_or("unset");
    std::string visible_from = "as Slurm set it";
    for (const auto& e : t.env)
      if (e.name == contract::kCudaVisibleDevices) {
        visible = e.value;
        visible_from =
            "widened by the plan from " + slurms.value_or("unset") + " to the step's GPUs";
      }
    out << "; CUDA_VISIBLE_DEVICES=" << visible << " (" << visible_from << "), cuda:" << local
        << " with CUDA_DEVICE_ORDER=PCI_BUS_ID";
    if (!t.nic.empty()) out << "; NIC " << t.nic << " (" << t.nic_path << " from the GPU)";
    out << "\n";
  }
  return out.str();
}

}  // namespace ddp::tools
