#include "helper_process.hpp"

#include <dlfcn.h>
#include <sys/resource.h>

#include <string_view>
#include <vector>

#include "spank_api.hpp"

namespace ddp::spank {
namespace {

// slurm_rlimits_info.h, unchanged since Slurm 1.x: slurmstepd fills it from slurm.conf's
// PropagateResourceLimits[Except] and applies it to every task. It is in no public header, so it
// is looked up in the slurmstepd the plugin runs in.
struct SlurmRlimitsInfo {
  int resource;
  char* name;
  int propagate_flag;  // 1 propagate, 0 not, -1 not set
};
using GetRlimitsInfo = SlurmRlimitsInfo* (*)();

plan::Propagation slurm_propagation(std::string_view name) {
  static const auto get =
      reinterpret_cast<GetRlimitsInfo>(::dlsym(RTLD_DEFAULT, "get_slurm_rlimits_info"));
  if (!get) return plan::Propagation::Unknown;
  for (const SlurmRlimitsInfo* r = get(); r && r->name; ++r) {
    if (name != r->name) continue;
    if (r->propagate_flag == 1) return plan::Propagation::Yes;
    if (r->propagate_flag == 0) return plan::Propagation::No;
    return plan::Propagation::Unknown;
  }
  return plan::Propagation::Unknown;
}

}  // namespace

plan::UserLimits task_limits(char** job_env) {
  std::vector<std::string_view> env;
  for (char** e = job_env; e && *e; ++e) env.emplace_back(*e);
  return plan::user_limits(env, slurm_propagation);
}

void apply_user_limits(const plan::UserLimits& limits) noexcept {
  for (std::size_t i = 0; i < limits.count; ++i) {
    const plan::UserLimit& l = limits.limits[i];
    rlimit r{};
    if (getrlimit(l.resource, &r) != 0 || l.soft > r.rlim_max) continue;
    r.rlim_cur = l.soft;
    (void)setrlimit(l.resource, &r);
  }
}

}  // namespace ddp::spank
