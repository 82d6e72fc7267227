// `ddp-report JOBID[.STEP]`: the files of a job found as seff finds a job, by asking Slurm
// (scontrol while slurmctld still holds the job, then sacct from the accounting database) for its
// working directory and user, and looking there and in the monitor.dir of each of the site's
// profiles (expanded for that user and job), where --ddp-monitor writes.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "monitor_files.hpp"

namespace ddp::monitor {

struct JobRef {
  std::uint32_t job = 0;
  std::optional<std::uint32_t> step;
};

// "60" or "60.0"; nullopt for anything else.
std::optional<JobRef> parse_job_ref(const std::string& text);

struct JobFacts {
  std::string work_dir;
  std::string user;
};

// What Slurm says of a job, or nullopt with `why_not` saying what each source answered.
using SlurmQuery = std::function<std::optional<JobFacts>(std::uint32_t job, std::string& why_not)>;

// scontrol, then sacct.
std::optional<JobFacts> ask_slurm(std::uint32_t job, std::string& why_not);

// WorkDir= and UserId=NAME(UID) of `scontrol show job --oneliner` output.
std::optional<JobFacts> parse_scontrol_job(const std::string& text);

// The profile directory of the installed plugstack line (its profile_dir=, else the plugin's
// default), for the monitor.dir of the site's profiles.
std::string site_profile_dir(const std::string& plugstack_snippet);

// The job's files: in its working directory and in every profile's monitor.dir. When Slurm no
// longer knows the job, in the current directory. Throws ddp::plan::PlanError saying where it
// looked and how to name the files instead.
std::vector<MonitorFile> find_job_files(const JobRef& ref, const std::string& profile_dir,
                                        const SlurmQuery& slurm = ask_slurm);

}  // namespace ddp::monitor
