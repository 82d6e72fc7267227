#include "monitor_files.hpp"

#include <algorithm>
#include <filesystem>

#include "error.hpp"
#include "parse.hpp"
#include "sampler_args.hpp"

namespace ddp::monitor {
namespace {

namespace fs = std::filesystem;
using plan::PlanError;

bool has_shape(const std::string& name, const std::string& prefix) {
  const std::string suffix = kFileSuffix;
  return name.size() > prefix.size() + suffix.size() && name.compare(0, prefix.size(), prefix) == 0 &&
         name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::vector<std::string> files_in(const std::string& dir, const std::string& prefix) {
  std::vector<std::string> found;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->is_regular_file(ec) && has_shape(it->path().filename().string(), prefix))
      found.push_back(it->path().string());
  std::sort(found.begin(), found.end());
  return found;
}

}  // namespace

std::vector<std::string> monitor_files(const std::vector<std::string>& paths) {
  std::vector<std::string> out;
  for (const std::string& p : paths) {
    std::error_code ec;
    const auto status = fs::status(p, ec);
    if (ec || !fs::exists(status))
      throw PlanError(plan::quoted(p) + " does not exist. Fix: name ddp-monitor-*" + kFileSuffix +
                      " files, the directory that holds them, or a job as JOBID[.STEP]");
    if (!fs::is_directory(status)) {
      out.push_back(p);
      continue;
    }
    const auto found = files_in(p, kFilePrefix);
    if (found.empty())
      throw PlanError(plan::quoted(p) + " holds no " + kFilePrefix + "*" + kFileSuffix +
                      " file. Fix: name the directory --ddp-monitor wrote into (the job's "
                      "working directory, or the profile's monitor.dir), or the job as JOBID");
    out.insert(out.end(), found.begin(), found.end());
  }
  return out;
}

std::vector<std::string> job_files_in(const std::string& dir, std::uint32_t job,
                                      std::optional<std::uint32_t> step) {
  std::string prefix = kFilePrefix + std::to_string(job) + ".";
  if (step) prefix += std::to_string(*step) + "-";
  return files_in(dir, prefix);
}

}  // namespace ddp::monitor
