#include "html_page.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>

#include <nlohmann/json.hpp>

#include "error.hpp"
#include "monitor_files.hpp"
#include "page_assets.hpp"
#include "human_text.hpp"
#include "printable.hpp"
#include "step_charts.hpp"
#include "step_text.hpp"
#include "svg_chart.hpp"

namespace ddp::monitor {
namespace {

using Json = nlohmann::ordered_json;

std::string esc(const std::string& s) { return html_escape(s); }

std::string pct(const std::optional<double>& v) { return v ? plan::fixed_text(*v, 0) + "%" : "-"; }

std::string or_dash(const std::optional<double>& v, std::string (*show)(double)) {
  return v ? show(*v) : "-";
}

std::string node_name(const StepData& step, std::size_t i) { return step.nodes[i].summary.start->node; }

std::string row(const std::string& head, const std::string& value) {
  return "<tr><th>" + esc(head) + "</th><td>" + value + "</td></tr>";
}

std::string summary_table(const StepData& step, const Verdicts& v) {
  const StepTotals t = totals_of(step);
  const NodeSummary& first = step.nodes.front().summary;
  unsigned samples = 0;
  double rx = 0, tx = 0;
  for (const NodeLog& n : step.nodes) {
    samples = std::max(samples, n.summary.samples);
    const NodeFigures f = figures_of(n.summary);
    rx += f.rx_bytes.value_or(0);
    tx += f.tx_bytes.value_or(0);
  }
  std::string s = "<table class=\"summary\">";
  s += row("Nodes", std::to_string(step.nodes.size()) + " of " + std::to_string(step.expected_nodes) +
                        " reported");
  s += row("GPUs", std::to_string(t.gpus));
  s += row("Time", esc(plan::duration_text(t.duration)) + ", sampled every " +
                       plan::fixed_text(first.start->interval, 0) + " s (" + std::to_string(samples) +
                       " samples)");
  if (t.gpu_util_mean) s += row("Mean GPU utilisation", pct(t.gpu_util_mean));
  s += row("Idle GPUs", std::to_string(v.idle.size()));
  s += row("Slow nodes", std::to_string(v.slow.size()) +
                             (v.median_activity ? " (" + esc(v.activity_name()) + " of the median node: " +
                                                      pct(v.median_activity) + ")"
                                                : std::string()));
  if (rx > 0 || tx > 0)
    s += row("NIC bytes, all nodes", esc(format_bytes(rx)) + " received, " + esc(format_bytes(tx)) + " sent");
  return s + "</table>\n";
}

std::string flags(const StepData& step, const Verdicts& v) {
  std::vector<std::string> idle, slow;
  for (const IdleGpu& i : v.idle)
    idle.push_back(node_name(step, i.node) + " GPU " + std::to_string(i.gpu) + " (" +
                   pct(i.util_mean) + ")");
  for (const SlowNode& n : v.slow) slow.push_back(node_name(step, n.node) + " (" + pct(n.activity) + ")");
  std::string s;
  if (!idle.empty())
    s += "<li class=\"idle\">" + std::to_string(idle.size()) + " idle GPU" + (idle.size() == 1 ? "" : "s") +
         ", mean utilisation below " + plan::fixed_text(kIdleUtilPercent, 0) +
         "%: " + esc(listed(idle, 8)) +
         ". No rank drove them: check that every rank uses cuda:LOCAL_RANK, or ask for fewer GPUs.</li>";
  if (!slow.empty())
    s += "<li class=\"slow\">" + std::to_string(slow.size()) + " slow node" + (slow.size() == 1 ? "" : "s") +
         ", " + esc(v.activity_name()) + " below " + plan::fixed_text(kSlowFraction * 100, 0) +
         "% of the median node's " + pct(v.median_activity) + ": " + esc(listed(slow, 8)) +
         ". In a DDP step every node does the same work, so such a node waits on something of its "
         "own (data loading, throttling, another job).</li>";
  std::size_t cut = 0;
  for (const NodeLog& n : step.nodes) cut += n.summary.end_reason ? 0 : 1;
  if (cut)
    s += "<li>" + std::to_string(cut) + " file" + (cut == 1 ? " ends" : "s end") +
         " early: the sampler was stopped before the step.</li>";
  return s.empty() ? "" : "<ul class=\"flags\">" + s + "</ul>\n";
}

std::string node_row(const StepData& step, std::size_t i, const Verdicts& v) {
  const NodeSummary& n = step.nodes[i].summary;
  const NodeFigures f = figures_of(n);
  std::string marks;
  for (const IdleGpu& g : v.idle)
    if (g.node == i) marks += "<span class=\"idle\">GPU " + std::to_string(g.gpu) + " idle</span> ";
  for (const SlowNode& s : v.slow)
    if (s.node == i) marks += "<span class=\"slow\">slow</span> ";
  for (const std::string& note : n.notes) marks += esc(note) + " ";
  const auto gib = [](double x) { return plan::fixed_text(x, 1) + " GiB"; };
  const auto watts = [](double x) { return plan::fixed_text(x, 0) + " W"; };
  const auto bytes = [](double x) { return format_bytes(x); };
  return std::string("<tr") + (v.flagged[i] ? " class=\"flagged\"" : "") + "><td>" + esc(n.start->node) +
         "</td><td class=\"num\">" + std::to_string(n.gpus.size()) + "</td><td class=\"num\">" +
         pct(f.gpu_util_mean) + "</td><td class=\"num\">" + or_dash(f.gpu_mem_peak_gib, +gib) +
         "</td><td class=\"num\">" + or_dash(f.gpu_power_mean, +watts) + "</td><td class=\"num\">" +
         pct(f.cpu_mean) + "</td><td class=\"num\">" + esc(or_dash(f.rx_bytes, +bytes)) +
         "</td><td class=\"num\">" + esc(or_dash(f.tx_bytes, +bytes)) + "</td><td>" + marks +
         "</td></tr>";
}

std::string node_table(const StepData& step, const Verdicts& v) {
  std::string s =
      "<table class=\"nodes\"><tr><th>node</th><th>GPUs</th><th>GPU util mean</th><th>GPU memory "
      "peak</th><th>GPU power mean</th><th>CPU per rank</th><th>NIC received</th><th>NIC "
      "sent</th><th></th></tr>";
  const bool all = step.nodes.size() <= kFullNodes;
  if (all) {
    for (std::size_t i = 0; i < step.nodes.size(); ++i) s += node_row(step, i, v);
  } else {
    for (std::size_t i : v.worst) s += node_row(step, i, v);
    s += "<tr><td colspan=\"9\">and " + std::to_string(step.nodes.size() - v.worst.size()) +
         " other nodes, within the spread the charts show (ddp-report --json lists every node)"
         "</td></tr>";
  }
  return s + "</table>\n";
}

// The charts' values for the script's readout, one decimal, null where nothing was sampled.
Json values_json(const std::vector<float>& values) {
  Json out = Json::array();
  for (float v : values)
    out.push_back(std::isnan(v) ? Json(nullptr) : Json(std::round(static_cast<double>(v) * 10) / 10));
  return out;
}

Json chart_json(const Chart& c, const std::string& figure) {
  Json series = Json::array();
  if (c.spread)
    for (const auto& [label, values] : {std::pair{"max", &c.nodes.max}, std::pair{"median", &c.nodes.median},
                                        std::pair{"min", &c.nodes.min}})
      series.push_back({{"label", std::string("nodes' ") + label}, {"values", values_json(*values)}});
  for (const ChartLine& l : c.lines)
    series.push_back({{"label", plan::printable(l.label)}, {"values", values_json(l.values)}});
  return {{"figure", figure},
          {"unit", metric_info(c.metric).unit},
          {"bins", c.axis->bins},
          {"bin_seconds", c.axis->bin_seconds},
          {"span", std::max(c.axis->span, c.axis->bin_seconds)},
          {"series", std::move(series)}};
}

std::string step_section(const JudgedStep& js, Json& charts) {
  const StepData& step = *js.step;
  const std::string id = std::to_string(step.job) + "." + std::to_string(step.step);
  std::string s = "<section class=\"step\" id=\"step-" + id + "\"><h1>Job " + std::to_string(step.job) +
                  ", step " + std::to_string(step.step) + "</h1>\n";
  s += "<p>" + esc(step_line(step, js.verdicts)) + "</p>\n";
  s += summary_table(step, js.verdicts) + flags(step, js.verdicts);
  const auto drawn = step_charts(step, js.verdicts);
  if (drawn.empty()) s += "<p>Nothing was sampled over time in this step.</p>\n";
  bool gpu = false;
  for (const Chart& c : drawn) gpu = gpu || c.metric == Metric::GpuUtil;
  if (!gpu) s += "<p>No GPU readings: the step had no GPUs, or NVML was not available.</p>\n";
  if (!drawn.empty() && drawn.front().spread)
    s += "<p>" + std::to_string(step.nodes.size()) +
         " nodes: each chart shows the spread of the nodes' values (a node's value is the mean "
         "over its GPUs or ranks, the sum over its NICs) and the worst nodes on their own.</p>\n";
  for (const Chart& c : drawn) {
    const std::string figure = "chart-" + id + "-" + metric_info(c.metric).id;
    s += render_chart(c, figure);
    charts.push_back(chart_json(c, figure));
  }
  s += "<h2>Nodes</h2>\n" + node_table(step, js.verdicts);
  return s + "</section>\n";
}

plan::PlanError not_written(const std::string& path, const std::string& why) {
  return plan::PlanError(plan::printable(path) + ": cannot be written: " + why +
                         ". Fix: choose a writable path for --html");
}

// A name no one else can have taken: O_EXCL refuses one that exists, a link included.
Fd new_file_beside(int dir, const std::string& name, std::string& temp) {
  std::random_device random;
  for (int tries = 0; tries < 16; ++tries) {
    temp = "." + name + "." + std::to_string(random()) + ".tmp";
    Fd fd(::openat(dir, temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666));
    if (fd.get() >= 0 || errno != EEXIST) return fd;
  }
  errno = EEXIST;
  return Fd();
}

bool write_all(int fd, const std::string& text) {
  for (std::size_t done = 0; done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

void write_page_file(const std::string& path, const std::string& page) {
  const std::filesystem::path p(path);
  const std::string name = p.filename().string();
  const std::string dir_path = p.has_parent_path() ? p.parent_path().string() : ".";
  if (name.empty() || name == "." || name == "..") throw not_written(path, "it names a directory");
  const Fd dir(::open(dir_path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir.get() < 0)
    throw not_written(path, "its directory cannot be opened: " + std::string(std::strerror(errno)));
  std::string temp;
  Fd out = new_file_beside(dir.get(), name, temp);
  if (out.get() < 0) throw not_written(path, std::strerror(errno));
  int err = write_all(out.get(), page) ? 0 : errno;
  if (::close(out.release()) != 0 && !err) err = errno;
  if (!err && ::renameat(dir.get(), temp.c_str(), dir.get(), name.c_str()) != 0) err = errno;
  if (err) {
    ::unlinkat(dir.get(), temp.c_str(), 0);
    throw not_written(path, std::strerror(err));
  }
}

std::string render_page(const std::vector<JudgedStep>& steps, const std::string& generator) {
  std::string title = "ddp-report";
  for (const JudgedStep& s : steps)
    title += " " + std::to_string(s.step->job) + "." + std::to_string(s.step->step);
  Json charts = Json::array();
  std::string body;
  for (const JudgedStep& s : steps) body += step_section(s, charts);
  const Json data = {{"plot", {{"width", kChartWidth}, {"left", kPlotLeft}, {"right", kPlotRight}}},
                     {"charts", std::move(charts)}};
  // A '<' in a name could end the script element ("</script>") or open a comment in it: JSON
  // writes it as \u003c instead (it occurs only inside strings).
  std::string data_text;
  for (char ch : data.dump(-1, ' ', false, Json::error_handler_t::replace))
    data_text += ch == '<' ? std::string("\\u003c") : std::string(1, ch);
  return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" + esc(title) +
         "</title><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><style>" +
         kPageStyle + "</style></head>\n<body>\n" + body + "<footer>Made by " + esc(generator) +
         " on " + esc(plan::local_time_text("%Y-%m-%d %H:%M:%S %z")) + " from the files of ddp-monitor (--ddp-monitor).</footer>\n" +
         "<script type=\"application/json\" id=\"report-data\">" + data_text + "</script>\n<script>" +
         kPageScript + "</script>\n</body></html>\n";
}

}  // namespace ddp::monitor
