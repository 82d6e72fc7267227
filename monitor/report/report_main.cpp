// ddp-report FILES|DIR|JOBID[.STEP]...: the summary of --ddp-monitor's per-node files per step;
// --json the same for scripts, --html FILE a page with charts over time.
#include <CLI/CLI.hpp>

#include <filesystem>
#include <iostream>

#include "error.hpp"
#include "html_page.hpp"
#include "job_lookup.hpp"
#include "monitor_files.hpp"
#include "printable.hpp"
#include "step_json.hpp"
#include "step_report.hpp"
#include "step_text.hpp"
#include "verdicts.hpp"
#include "version.hpp"

namespace {

namespace mon = ddp::monitor;

// A path that exists is read as one; else JOBID[.STEP] is looked up; else the path's error.
std::vector<mon::MonitorFile> files_of(const std::vector<std::string>& args,
                                       const std::string& profile_dir) {
  std::vector<mon::MonitorFile> files;
  for (const std::string& a : args) {
    std::error_code ec;
    const auto job = mon::parse_job_ref(a);
    const auto found = job && !std::filesystem::exists(a, ec) ? mon::find_job_files(*job, profile_dir)
                                                              : mon::monitor_files({a});
    files.insert(files.end(), found.begin(), found.end());
  }
  return files;
}

// The text shows each file's warnings; with --json stdout is a script's, and whoever ran it
// reads them here.
void warn(const std::vector<mon::StepData>& steps) {
  for (const mon::StepData& s : steps)
    for (const mon::NodeLog& n : s.nodes)
      for (const std::string& w : n.warnings)
        std::cerr << "ddp-report: warning: " << ddp::plan::printable(w) << "\n";
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Reports the steps run with --ddp-monitor from the files it wrote "
      "(ddp-monitor-JOB.STEP-NODE.jsonl): per step a line, then per node its GPUs, tasks and NICs; "
      "--json the same for scripts, --html a page with charts over time.",
      "ddp-report"};
  app.set_version_flag("--version", std::string("ddp-report ") + ddp::plan::kVersion);
  std::vector<std::string> args;
  std::string html, profile_dir = mon::site_profile_dir(DDP_PLUGSTACK_SNIPPET);
  bool json = false;
  app.add_option("what", args,
                 "ddp-monitor-*.jsonl files, directories that hold them, or a job as JOBID[.STEP] "
                 "(its files are found through Slurm and the site's profiles)")
      ->required();
  app.add_flag("--json", json, "print the report as JSON (ddp-report(1) has the schema)");
  app.add_option("--html", html, "also write a self-contained HTML page with charts over time");
  app.add_option("--profile-dir", profile_dir,
                 "where the site's profiles are, for their monitor.dir (default: the plugstack "
                 "line's profile_dir)");
  CLI11_PARSE(app, argc, argv);
  try {
    std::vector<mon::FileHead> heads;
    for (const mon::MonitorFile& f : files_of(args, profile_dir)) heads.push_back(mon::read_head(f));
    // Each step's files are read through once; what stays is bounded by nodes and time bins.
    std::vector<mon::StepData> steps;
    for (const mon::StepFiles& files : mon::group_by_step(std::move(heads)))
      steps.push_back(mon::read_step(files));
    std::vector<mon::JudgedStep> judged;
    for (const mon::StepData& s : steps) judged.push_back({&s, mon::judge(s)});

    if (json) {
      nlohmann::ordered_json out = {{"format", mon::kReportFormat}, {"steps", nlohmann::ordered_json::array()}};
      for (const mon::JudgedStep& j : judged) out["steps"].push_back(mon::step_json(*j.step, j.verdicts));
      std::cout << out.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << "\n";
      warn(steps);
    } else {
      for (std::size_t i = 0; i < judged.size(); ++i)
        std::cout << (i ? "\n" : "") << mon::format_step(*judged[i].step, judged[i].verdicts);
    }
    if (!html.empty()) {
      const std::string page =
          mon::render_page(judged, std::string("ddp-report ") + ddp::plan::kVersion);
      mon::write_page_file(html, page);
      std::cerr << "ddp-report: wrote " << ddp::plan::printable(html) << " (" << page.size()
                << " bytes)\n";
    }
  } catch (const std::exception& e) {
    // Messages quote paths and lines of the files, which may be another user's.
    std::cerr << "ddp-report: " << ddp::plan::printable(e.what()) << "\n";
    return 1;
  }
  return 0;
}
