#include "step_report.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>

#include "error.hpp"
#include "parse.hpp"
#include "sampler_args.hpp"

namespace ddp::monitor {
namespace {

using plan::PlanError;
using plan::quoted;

bool is_monitor_file(const std::string& name) {
  const std::string prefix = kFilePrefix, suffix = kFileSuffix;
  return name.size() > prefix.size() + suffix.size() && name.compare(0, prefix.size(), prefix) == 0 &&
         name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string node_name(const NodeLog& n) {
  return n.summary.start ? n.summary.start->node : n.path;
}

}  // namespace

NodeLog read_node_log(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw PlanError(path + ": cannot be read. Fix: check the path and its permissions");
  NodeLog log;
  log.path = path;
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::size_t line_no = 0, pos = 0;
  while (pos < text.size()) {
    const std::size_t nl = text.find('\n', pos);
    const bool complete = nl != std::string::npos;
    const std::string line = text.substr(pos, complete ? nl - pos : std::string::npos);
    pos = complete ? nl + 1 : text.size();
    ++line_no;
    const auto not_ours = [&] {
      return PlanError(path + ":" + std::to_string(line_no) +
                       ": is not a ddp-monitor file: it does not begin with a start record");
    };
    std::optional<Record> r;
    try {
      r = parse_record(line);
    } catch (const PlanError& e) {
      if (!log.summary.start) throw not_ours();
      // A sampler killed while writing leaves half a line at the end: that line only is dropped.
      if (!complete) {
        log.warnings.push_back(path + ":" + std::to_string(line_no) +
                               ": the last line is cut short and was skipped");
        break;
      }
      throw PlanError(path + ":" + std::to_string(line_no) + ": " + e.what() +
                      ". Fix: give ddp-report the files ddp-monitor wrote, unchanged");
    }
    if (!r) continue;
    if (!log.summary.start && !std::holds_alternative<StartRecord>(r->body)) throw not_ours();
    log.summary.add(*r);
    if (const auto* g = std::get_if<GpuSample>(&r->body); g && g->util) {
      auto it = std::find_if(log.util.begin(), log.util.end(),
                             [&](const auto& s) { return s.first == g->gpu; });
      if (it == log.util.end()) it = log.util.insert(log.util.end(), {g->gpu, {}});
      it->second.emplace_back(r->time, *g->util);
    }
  }
  if (!log.summary.start)
    throw PlanError(path + ": holds no records; this is not a ddp-monitor file (an empty one "
                           "means the sampler was stopped before it began)");
  log.summary.file = path;
  std::sort(log.util.begin(), log.util.end());
  return log;
}

std::vector<std::string> monitor_files(const std::vector<std::string>& paths) {
  std::vector<std::string> out;
  for (const std::string& p : paths) {
    std::error_code ec;
    const auto status = std::filesystem::status(p, ec);
    if (ec || !std::filesystem::exists(status))
      throw PlanError(plan::quoted(p) + " does not exist. Fix: name ddp-monitor-*.txt files or the "
                      "directory that holds them");
    if (!std::filesystem::is_directory(status)) {
      out.push_back(p);
      continue;
    }
    std::vector<std::string> found;
    for (const auto& e : std::filesystem::directory_iterator(p, ec))
      if (e.is_regular_file() && is_monitor_file(e.path().filename().string()))
        found.push_back(e.path().string());
    if (found.empty())
      throw PlanError(plan::quoted(p) + " holds no " + kFilePrefix + "*" + kFileSuffix +
                      " file. Fix: name the directory --ddp-monitor wrote into (the job's "
                      "working directory, or the profile's monitor.dir)");
    std::sort(found.begin(), found.end());
    out.insert(out.end(), found.begin(), found.end());
  }
  return out;
}

std::vector<StepLogs> group_by_step(std::vector<NodeLog> logs) {
  std::map<std::pair<std::uint32_t, std::uint32_t>, StepLogs> steps;
  for (NodeLog& log : logs) {
    const StartRecord& s = *log.summary.start;
    StepLogs& step = steps[{s.job, s.step}];
    step.job = s.job;
    step.step = s.step;
    step.nodes.push_back(std::move(log));
  }
  std::vector<StepLogs> out;
  for (auto& [key, step] : steps) {
    std::vector<std::pair<unsigned, std::size_t>> order;  // node index, place read
    for (std::size_t i = 0; i < step.nodes.size(); ++i)
      order.emplace_back(step.nodes[i].summary.start->node_index, i);
    std::sort(order.begin(), order.end());
    std::vector<NodeLog> sorted;
    for (const auto& o : order) sorted.push_back(std::move(step.nodes[o.second]));
    step.nodes = std::move(sorted);
    out.push_back(std::move(step));
  }
  return out;
}

std::string format_step(const StepLogs& step) {
  unsigned gpus = 0, sampled = 0;
  double util_sum = 0;
  std::vector<std::string> idle;
  for (const NodeLog& n : step.nodes)
    for (const GpuSummary& g : n.summary.gpus) {
      ++gpus;
      if (const auto mean = g.util_mean()) {
        ++sampled;
        util_sum += *mean;
      }
      if (g.idle()) idle.push_back(node_name(n) + " GPU " + std::to_string(g.info.gpu));
    }
  const unsigned expected = step.nodes.front().summary.start->nodes;
  char buf[64];
  std::string s = "job " + std::to_string(step.job) + " step " + std::to_string(step.step) + ": " +
                  std::to_string(step.nodes.size()) + " of " + std::to_string(expected) +
                  (expected == 1 ? " node" : " nodes");
  s += ", " + std::to_string(gpus) + (gpus == 1 ? " GPU" : " GPUs");
  if (sampled) {
    std::snprintf(buf, sizeof buf, "%.0f%%", util_sum / sampled);
    s += ", mean GPU utilisation " + std::string(buf);
  }
  if (!idle.empty()) {
    s += ", " + std::to_string(idle.size()) + " idle (";
    for (std::size_t i = 0; i < idle.size(); ++i) s += (i ? ", " : "") + idle[i];
    s += ")";
  }
  s += "\n";
  for (const NodeLog& n : step.nodes) {
    s += format_summary(n.summary);
    for (const std::string& w : n.warnings) s += "  warning: " + w + "\n";
  }
  return s;
}

GpuChart step_chart(const StepLogs& step) {
  GpuChart chart;
  chart.title = "job " + std::to_string(step.job) + " step " + std::to_string(step.step);
  double origin = step.nodes.front().summary.start->unix_time;
  for (const NodeLog& n : step.nodes) origin = std::min(origin, n.summary.start->unix_time);
  for (const NodeLog& n : step.nodes) {
    const double offset = n.summary.start->unix_time - origin;
    chart.duration = std::max(chart.duration, offset + n.summary.duration);
    for (const auto& [gpu, samples] : n.util) {
      GpuSeries series;
      series.label = node_name(n) + " GPU " + std::to_string(gpu);
      for (const auto& [t, util] : samples) series.samples.emplace_back(t + offset, util);
      for (const GpuSummary& g : n.summary.gpus)
        if (g.info.gpu == gpu) {
          series.mean = g.util_mean();
          series.idle = g.idle();
        }
      chart.gpus.push_back(std::move(series));
    }
  }
  return chart;
}

}  // namespace ddp::monitor
