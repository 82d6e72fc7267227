#include "user_limits.hpp"

#include <cstdint>
#include <exception>

#include "parse.hpp"

namespace ddp::plan {
namespace {

struct Named {
  const char* name;
  int resource;
};

// Slurm's names (slurm_rlimits_info.c). Slurm also caps RSS and AS from the step's memory when
// VSizeFactor is set; the step's cgroup holds helpers and tasks to that memory alike, so only the
// propagated values are taken here.
constexpr Named kLimits[] = {
    {"CPU", RLIMIT_CPU},         {"FSIZE", RLIMIT_FSIZE},   {"DATA", RLIMIT_DATA},
    {"STACK", RLIMIT_STACK},     {"CORE", RLIMIT_CORE},     {"RSS", RLIMIT_RSS},
    {"NPROC", RLIMIT_NPROC},     {"NOFILE", RLIMIT_NOFILE}, {"MEMLOCK", RLIMIT_MEMLOCK},
    {"AS", RLIMIT_AS},
};
static_assert(sizeof kLimits / sizeof kLimits[0] <= UserLimits::kMax);

constexpr std::string_view kPrefix = "SLURM_RLIMIT_";

std::optional<std::string_view> value_of(const std::vector<std::string_view>& env,
                                         std::string_view name) {
  for (std::string_view entry : env) {
    if (entry.size() <= kPrefix.size() + name.size() || entry.substr(0, kPrefix.size()) != kPrefix)
      continue;
    const std::string_view rest = entry.substr(kPrefix.size());
    if (rest.substr(0, name.size()) == name && rest[name.size()] == '=')
      return rest.substr(name.size() + 1);
  }
  return std::nullopt;
}

}  // namespace

UserLimits user_limits(const std::vector<std::string_view>& env, const PropagationRule& rule) {
  UserLimits out;
  for (const Named& l : kLimits) {
    auto value = value_of(env, l.name);
    if (!value) continue;
    const bool asked = !value->empty() && value->front() == 'U';
    if (asked) value->remove_prefix(1);
    if (!asked && rule(l.name) != Propagation::Yes) continue;
    // Slurm writes rlim_t as a plain decimal (RLIM_INFINITY is its largest value).
    try {
      const auto soft = parse_unsigned(kPrefix, *value, 0, UINT64_MAX);
      out.limits[out.count++] = {l.resource, static_cast<rlim_t>(soft)};
    } catch (const std::exception&) {
    }
  }
  return out;
}

}  // namespace ddp::plan
