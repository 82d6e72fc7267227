// ddp-report JOBID[.STEP]: the job's files found in its working directory (Slurm's word) and in
// the site's profiles' monitor.dir, and what is said when there are none.
#include <gtest/gtest.h>

#include <filesystem>

#include "job_lookup.hpp"
#include "report_test_util.hpp"

using namespace ddp::monitor;
using namespace ddp::monitor::test;

TEST(MonitorJobLookup, JobReferences) {
  EXPECT_EQ(parse_job_ref("60")->job, 60u);
  EXPECT_FALSE(parse_job_ref("60")->step);
  EXPECT_EQ(parse_job_ref("60.2")->step, 2u);
  EXPECT_EQ(parse_job_ref("4294967295")->job, 4294967295u);
  for (const char* bad : {"", "60.", ".2", "60.2.1", "4294967296", "x60", "60_1", "/tmp/60", "-1"})
    EXPECT_FALSE(parse_job_ref(bad)) << bad;
}

TEST(MonitorJobLookup, ScontrolsOneLinerGivesTheWorkingDirectoryAndUser) {
  const std::string line =
      "JobId=60 JobName=job.sh UserId=alice(1000) GroupId=alice(1000) MCS_label=N/A Priority=1 "
      "Command=/home/alice/my runs/job.sh WorkDir=/home/alice/my runs StdErr=/home/alice/my "
      "runs/slurm-60.out StdIn=/dev/null TRES=cpu=4,node=2 Socks/Node=* CPUs/Task=1\n";
  const auto facts = parse_scontrol_job(line);
  ASSERT_TRUE(facts);
  EXPECT_EQ(facts->work_dir, "/home/alice/my runs");
  EXPECT_EQ(facts->user, "alice");
  EXPECT_FALSE(parse_scontrol_job("slurm_load_jobs error: Invalid job id specified\n"));
}

TEST(MonitorJobLookup, TheSiteProfileDirectoryComesFromThePlugstackLine) {
  Dir d;
  const std::string snippet =
      d.write("ddp.conf", "# comment spank_ddp.so profile_dir=/nope\n"
                          "required /usr/lib/slurm/spank_ddp.so port_range=20000-29999 "
                          "profile_dir=/site/profiles\n");
  EXPECT_EQ(site_profile_dir(snippet), "/site/profiles");
  EXPECT_EQ(site_profile_dir(d.path() + "/missing"), "/etc/slurm/ddp/profiles");
  EXPECT_EQ(site_profile_dir(d.write("bad.conf", "required spank_ddp.so nonsense=1\n")),
            "/etc/slurm/ddp/profiles");
}

TEST(MonitorJobLookup, FilesInTheWorkingDirectoryAndInAProfilesMonitorDir) {
  Dir work, profiles, scratch;
  work.write("ddp-monitor-60.0-n1.jsonl", "");
  work.write("ddp-monitor-61.0-n1.jsonl", "");
  std::filesystem::create_directories(scratch.path() + "/alice/60");
  scratch.write("alice/60/ddp-monitor-60.1-n1.jsonl", "");
  profiles.write("site.yaml", "name: site\nmonitor: {dir: \"" + scratch.path() + "/%u/%j\"}\n");
  profiles.write("plain.yaml", "name: plain\n");
  profiles.write("broken.yaml", "name: [\n");
  const SlurmQuery slurm = [&](std::uint32_t job, std::string&) -> std::optional<JobFacts> {
    EXPECT_EQ(job, 60u);
    return JobFacts{work.path(), "alice"};
  };
  EXPECT_EQ(paths_of(find_job_files({60, std::nullopt}, profiles.path(), slurm)),
            (std::vector<std::string>{work.path() + "/ddp-monitor-60.0-n1.jsonl",
                                      scratch.path() + "/alice/60/ddp-monitor-60.1-n1.jsonl"}));
  EXPECT_EQ(paths_of(find_job_files({60, 1}, profiles.path(), slurm)),
            std::vector<std::string>{scratch.path() + "/alice/60/ddp-monitor-60.1-n1.jsonl"});
  EXPECT_EQ(error_of([&] { find_job_files({60, 7}, profiles.path(), slurm); }),
            "found no ddp-monitor-60.7-*.jsonl file of job 60.7: looked in " + work.path() + ", " +
                scratch.path() + "/alice/60. Fix: check that the step ran with --ddp-monitor, or "
                "name the files or their directory: ddp-report DIR");
}

TEST(MonitorJobLookup, AJobSlurmForgotIsLookedForInTheCurrentDirectory) {
  Dir here, profiles;
  here.write("ddp-monitor-77.0-n1.jsonl", "");
  const SlurmQuery forgot = [](std::uint32_t, std::string& why) -> std::optional<JobFacts> {
    why = "scontrol: slurm_load_jobs error: Invalid job id specified; sacct: accounting is off";
    return std::nullopt;
  };
  const auto before = std::filesystem::current_path();
  std::filesystem::current_path(here.path());
  const auto found = paths_of(find_job_files({77, std::nullopt}, profiles.path(), forgot));
  const std::string missing = error_of([&] { find_job_files({78, std::nullopt}, profiles.path(), forgot); });
  std::filesystem::current_path(before);
  EXPECT_EQ(found, std::vector<std::string>{here.path() + "/ddp-monitor-77.0-n1.jsonl"});
  EXPECT_EQ(missing, "found no ddp-monitor-78.*.jsonl file of job 78: looked in " + here.path() +
                         " (Slurm gave no working directory for it: scontrol: slurm_load_jobs "
                         "error: Invalid job id specified; sacct: accounting is off). Fix: check "
                         "that the step ran with --ddp-monitor, or name the files or their "
                         "directory: ddp-report DIR");
}
