#include "summary.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "human_text.hpp"

namespace ddp::monitor {
namespace {

std::string fixed(double v, int digits) { return plan::fixed_text(v, digits); }

std::string percent(const std::optional<double>& v) { return v ? fixed(*v, 0) + "%" : "-"; }
std::string watts(const std::optional<double>& v) { return v ? fixed(*v, 0) + " W" : "-"; }


std::string memory(const GpuSummary& g) {
  if (!g.mem_peak_mib) return "-";
  const double total = g.info.mem_total_mib.value_or(0);
  const auto gib = [](double mib) { return fixed(mib / 1024, 1); };
  return total > 0 ? gib(*g.mem_peak_mib) + " of " + gib(total) + " GiB"
                   : gib(*g.mem_peak_mib) + " GiB";
}

}  // namespace

std::optional<double> GpuSummary::util_mean() const {
  if (util_samples == 0) return std::nullopt;
  return util_sum / util_samples;
}
std::optional<double> GpuSummary::power_mean() const {
  if (power_samples == 0) return std::nullopt;
  return power_sum / power_samples;
}
bool GpuSummary::idle() const {
  const auto mean = util_mean();
  return mean && *mean < kIdleUtilPercent;
}
std::optional<double> TaskSummary::cpu_mean() const {
  if (samples == 0) return std::nullopt;
  return cpu_sum / samples;
}

namespace {

// The entry whose key is `key` in a list kept sorted by key, made when it is not there yet.
template <class T, class Key>
T& entry(std::vector<T>& list, unsigned key, Key key_of) {
  auto it = std::lower_bound(list.begin(), list.end(), key,
                             [&](const T& x, unsigned k) { return key_of(x) < k; });
  if (it != list.end() && key_of(*it) == key) return *it;
  T fresh;
  key_of(fresh) = key;
  return *list.insert(it, fresh);
}

}  // namespace

GpuSummary& NodeSummary::gpu(unsigned index) {
  return entry(gpus, index, [](auto& g) -> auto& { return g.info.gpu; });
}

TaskSummary& NodeSummary::task(unsigned rank) {
  return entry(tasks, rank, [](auto& t) -> auto& { return t.info.rank; });
}

NicSummary& NodeSummary::nic(const std::string& name, bool ib) {
  auto it = std::find_if(nics.begin(), nics.end(),
                         [&](const auto& n) { return n.nic == name && n.ib == ib; });
  if (it != nics.end()) return *it;
  NicSummary n;
  n.nic = name;
  n.ib = ib;
  nics.push_back(n);
  return nics.back();
}

void NodeSummary::add(const Record& r) {
  duration = std::max(duration, r.time);
  const auto sampled = [&] {
    if (r.time > last_sample_time_) {
      last_sample_time_ = r.time;
      ++samples;
    }
  };
  std::visit(
      [&](const auto& b) {
        using T = std::decay_t<decltype(b)>;
        if constexpr (std::is_same_v<T, StartRecord>) {
          start = b;
        } else if constexpr (std::is_same_v<T, GpuInfo>) {
          gpu(b.gpu).info = b;
        } else if constexpr (std::is_same_v<T, TaskInfo>) {
          task(b.rank).info = b;
        } else if constexpr (std::is_same_v<T, GpuSample>) {
          sampled();
          GpuSummary& g = gpu(b.gpu);
          if (b.util) {
            ++g.util_samples;
            g.util_sum += *b.util;
            g.util_peak = std::max(g.util_peak, *b.util);
          }
          if (b.mem_used_mib) g.mem_peak_mib = std::max(g.mem_peak_mib.value_or(0), *b.mem_used_mib);
          if (b.power_w) {
            ++g.power_samples;
            g.power_sum += *b.power_w;
            g.power_peak = std::max(g.power_peak, *b.power_w);
          }
        } else if constexpr (std::is_same_v<T, CpuSample>) {
          sampled();
          TaskSummary& t = task(b.rank);
          ++t.samples;
          t.cpu_sum += b.cpu;
          t.cpu_peak = std::max(t.cpu_peak, b.cpu);
        } else if constexpr (std::is_same_v<T, NetSample>) {
          sampled();
          NicSummary& n = nic(b.nic, b.ib);
          // Counts run from TIME 0, so the first reading's rate is over the time since then.
          const double dt = r.time - n.last_time;
          if (dt > 0) {
            // Counts only grow; a smaller one means the counter was reset, which the rate skips.
            if (b.rx_bytes >= n.rx_bytes)
              n.rx_peak = std::max(n.rx_peak, static_cast<double>(b.rx_bytes - n.rx_bytes) / dt);
            if (b.tx_bytes >= n.tx_bytes)
              n.tx_peak = std::max(n.tx_peak, static_cast<double>(b.tx_bytes - n.tx_bytes) / dt);
          }
          n.rx_bytes = b.rx_bytes;
          n.tx_bytes = b.tx_bytes;
          n.last_time = r.time;
        } else if constexpr (std::is_same_v<T, Note>) {
          notes.push_back(b.text);
        } else {
          end_reason = b.reason;
        }
      },
      r.body);
}

std::vector<const GpuSummary*> NodeSummary::idle_gpus() const {
  std::vector<const GpuSummary*> out;
  for (const GpuSummary& g : gpus)
    if (g.idle()) out.push_back(&g);
  return out;
}

std::string format_bytes(double bytes) {
  static const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int u = 0;
  while (bytes >= 1024 && u < 5) {
    bytes /= 1024;
    ++u;
  }
  return u == 0 ? fixed(bytes, 0) + " B" : fixed(bytes, 1) + " " + units[u];
}

std::string format_summary(const NodeSummary& n) {
  std::ostringstream s;
  s << "ddp-monitor: node ";
  if (n.start) {
    s << n.start->node << " (" << n.start->node_index + 1 << " of " << n.start->nodes << "), job "
      << n.start->job << " step " << n.start->step;
  } else {
    s << "?";
  }
  s << ": " << plan::duration_text(n.duration) << ", " << n.samples << (n.samples == 1 ? " sample" : " samples");
  if (n.start) s << " every " << fixed(n.start->interval, 0) << " s";
  if (!n.end_reason) s << " (the file ends early: the sampler was stopped before the step)";
  s << "\n";
  if (!n.file.empty()) s << "  file " << n.file << "\n";
  if (!n.gpus.empty()) {
    std::vector<std::vector<std::string>> rows = {
        {"GPU", "BUS ID", "NAME", "UTIL MEAN", "PEAK", "MEMORY PEAK", "POWER MEAN", "PEAK", ""}};
    for (const GpuSummary& g : n.gpus)
      rows.push_back({std::to_string(g.info.gpu), g.info.busid.empty() ? "-" : g.info.busid,
                      g.info.name.empty() ? "-" : g.info.name, percent(g.util_mean()),
                      g.util_samples ? percent(g.util_peak) : "-", memory(g),
                      watts(g.power_mean()), g.power_samples ? watts(g.power_peak) : "-",
                      g.idle() ? "IDLE" : ""});
    s << format_table(rows, {false, false, false, true, true, true, true, true, false}, "  ");
  }
  if (!n.tasks.empty()) {
    std::vector<std::vector<std::string>> rows = {{"RANK", "PID", "CPU MEAN", "PEAK"}};
    for (const TaskSummary& t : n.tasks)
      rows.push_back({std::to_string(t.info.rank), t.info.pid ? std::to_string(t.info.pid) : "-",
                      percent(t.cpu_mean()), t.samples ? percent(t.cpu_peak) : "-"});
    s << format_table(rows, {false, true, true, true}, "  ");
  }
  if (!n.nics.empty()) {
    std::vector<std::vector<std::string>> rows = {
        {"NIC", "RECEIVED", "SENT", "PEAK IN", "PEAK OUT"}};
    for (const NicSummary& x : n.nics)
      rows.push_back({x.nic + (x.ib ? " (IB)" : ""), format_bytes(static_cast<double>(x.rx_bytes)),
                      format_bytes(static_cast<double>(x.tx_bytes)), format_bytes(x.rx_peak) + "/s",
                      format_bytes(x.tx_peak) + "/s"});
    s << format_table(rows, {false, true, true, true, true}, "  ");
  }
  for (const GpuSummary* g : n.idle_gpus())
    s << "  idle: GPU " << g->info.gpu << " averaged " << percent(g->util_mean())
      << " utilisation (below " << fixed(kIdleUtilPercent, 0)
      << "%): no rank drove it; check that every rank uses cuda:LOCAL_RANK, or ask for fewer "
         "GPUs\n";
  for (const std::string& note : n.notes) s << "  note: " << note << "\n";
  return s.str();
}

std::string format_table(const std::vector<std::vector<std::string>>& rows,
                         const std::vector<bool>& right, const std::string& indent) {
  std::vector<std::size_t> width(right.size(), 0);
  for (const auto& row : rows)
    for (std::size_t c = 0; c < row.size() && c < width.size(); ++c)
      width[c] = std::max(width[c], row[c].size());
  std::string out;
  for (const auto& row : rows) {
    std::string line = indent;
    for (std::size_t c = 0; c < row.size() && c < width.size(); ++c) {
      const std::string pad(width[c] - row[c].size(), ' ');
      line += (c ? "  " : "") + (right[c] ? pad + row[c] : row[c] + pad);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

}  // namespace ddp::monitor
