#include "plan_report.hpp"

#include <iomanip>
#include <sstream>

namespace ddp::tools {

nlohmann::json plan_to_json(const plan::StepPlan& step, const std::vector<plan::TaskPlan>& tasks) {
  const plan::StepFacts& f = step.facts;
  nlohmann::json j;
  j["step"] = {{"job_id", f.job_id},           {"step_id", f.step_id},
               {"nodes", f.nodes},             {"node_id", f.node_id},
               {"nodelist", f.nodelist},       {"tasks", f.total_tasks},
               {"local_tasks", f.local_tasks}, {"cpus", f.cpus_on_node},
               {"master_addr", step.master_addr}, {"master_port", step.port.port},
               {"port_source", plan::port_source_name(step.port.source)}};
  j["tasks"] = nlohmann::json::array();
  for (const auto& t : tasks) {
    nlohmann::json env = nlohmann::json::object();
    for (const auto& e : t.env) env[e.name] = e.value;
    j["tasks"].push_back({{"rank", t.contract.rank},
                          {"local_rank", t.contract.local_rank},
                          {"gpu", t.gpu ? nlohmann::json(*t.gpu) : nlohmann::json(nullptr)},
                          {"backend", contract::backend_name(t.contract.backend)},
                          {"omp_threads", t.omp_threads},
                          {"env", env}});
  }
  return j;
}

std::string plan_to_table(const plan::StepPlan& step, const std::vector<plan::TaskPlan>& tasks) {
  const plan::StepFacts& f = step.facts;
  std::ostringstream s;
  s << "step " << f.job_id << "." << f.step_id << ": node " << f.node_id << " of " << f.nodes
    << " (" << f.nodelist << "), " << f.local_tasks << " of " << f.total_tasks << " tasks here\n"
    << "rendezvous " << step.master_addr << ":" << step.port.port << " (port "
    << plan::port_source_name(step.port.source) << ")\n\n";
  s << std::left << std::setw(6) << "RANK" << std::setw(7) << "LOCAL" << std::setw(6) << "GPU"
    << std::setw(9) << "BACKEND" << "OMP_NUM_THREADS\n";
  for (const auto& t : tasks)
    s << std::setw(6) << t.contract.rank << std::setw(7) << t.contract.local_rank << std::setw(6)
      << (t.gpu ? std::to_string(*t.gpu) : std::string("-")) << std::setw(9)
      << contract::backend_name(t.contract.backend) << t.omp_threads << "\n";
  return s.str();
}

}  // namespace ddp::tools
