// ddp-report FILES|DIR...: the summary of --ddp-monitor's per-node files again, per step and per
// node, as the job's output showed it; --png FILE draws GPU utilisation over time.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <fstream>
#include <iostream>

#include "error.hpp"
#include "png.hpp"
#include "step_report.hpp"

int main(int argc, char** argv) {
  CLI::App app{
      "Prints the summary of the files --ddp-monitor wrote (ddp-monitor-JOB.STEP-NODE.txt): per "
      "step, per node, per GPU, task and NIC; --png draws GPU utilisation over time.",
      "ddp-report"};
  std::vector<std::string> paths;
  std::string png;
  app.add_option("paths", paths, "ddp-monitor-*.txt files, or directories that hold them")
      ->required();
  app.add_option("--png", png, "also write a PNG chart of GPU utilisation over time per GPU");
  CLI11_PARSE(app, argc, argv);
  try {
    std::vector<ddp::monitor::NodeLog> logs;
    for (const std::string& f : ddp::monitor::monitor_files(paths))
      logs.push_back(ddp::monitor::read_node_log(f));
    const auto steps = ddp::monitor::group_by_step(std::move(logs));
    for (std::size_t i = 0; i < steps.size(); ++i)
      std::cout << (i ? "\n" : "") << ddp::monitor::format_step(steps[i]);
    if (!png.empty()) {
      if (steps.size() != 1)
        throw ddp::plan::PlanError(
            "--png draws one step, and these files hold " + std::to_string(steps.size()) +
            ". Fix: give the files of one step, e.g. ddp-monitor-JOB.STEP-*.txt");
      const std::string bytes =
          ddp::monitor::encode_png(ddp::monitor::draw_gpu_chart(ddp::monitor::step_chart(steps[0])));
      std::ofstream out(png, std::ios::binary | std::ios::trunc);
      if (!out.write(bytes.data(), static_cast<std::streamsize>(bytes.size())) || !out.flush())
        throw ddp::plan::PlanError(png + ": cannot be written");
      std::cout << "wrote " << png << " (" << bytes.size() << " bytes)\n";
    }
  } catch (const std::exception& e) {
    std::cerr << "ddp-report: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
