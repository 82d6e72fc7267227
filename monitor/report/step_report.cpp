#include "step_report.hpp"

#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <exception>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <type_traits>
#include <variant>

#include "error.hpp"
#include "printable.hpp"

namespace ddp::monitor {
namespace {

using plan::PlanError;

// The tail read to find a file's last record: far more than one record's line.
constexpr std::uint64_t kTail = 64 * 1024;

// A parse error quotes the line it stopped in, which may be anything up to a line's bound.
constexpr std::size_t kQuotedBytes = 512;

// Parsing is the work (about 100 MB/s per thread): one thread per CPU this process may use, up to
// a few, past which the disk or the file system is what limits.
unsigned reading_threads() {
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  const int usable = sched_getaffinity(0, sizeof cpus, &cpus) == 0 ? CPU_COUNT(&cpus) : 1;
  return static_cast<unsigned>(std::clamp(usable, 1, 8));
}

std::string said(const PlanError& e) { return plan::printable(e.what(), kQuotedBytes); }

PlanError not_ours(const std::string& path, std::size_t line, const std::string& why) {
  return PlanError(path + ":" + std::to_string(line) + ": is not a ddp-monitor file: " + why +
                   ". Fix: give ddp-report the files ddp-monitor wrote (ddp-monitor-*.jsonl)");
}

PlanError first_line_too_long(const std::string& path, const ReadBounds& bounds) {
  return not_ours(path, 1, "its first line is longer than " +
                               format_bytes(static_cast<double>(bounds.line)));
}

// What one file may name: a node has at most a few dozen GPUs and NICs and a few hundred ranks,
// and says a few notes. A file another user wrote could name millions of each, every one a
// summary and a series of its own in this process: past these, its records are skipped, counted.
constexpr std::size_t kMaxGpus = 256, kMaxRanks = 4096, kMaxNics = 256, kMaxNotes = 256;

class EntityBound {
 public:
  // Whether `r` stays within the bounds (what it names was seen, or there is room for it).
  bool admits(const Record& r) {
    return std::visit(
        [&](const auto& b) {
          using T = std::decay_t<decltype(b)>;
          if constexpr (std::is_same_v<T, GpuInfo> || std::is_same_v<T, GpuSample>) return room(gpus_, b.gpu, kMaxGpus);
          if constexpr (std::is_same_v<T, TaskInfo> || std::is_same_v<T, CpuSample>) return room(ranks_, b.rank, kMaxRanks);
          if constexpr (std::is_same_v<T, NetSample>) return room(nics_, b.nic + (b.ib ? "/ib" : ""), kMaxNics);
          if constexpr (std::is_same_v<T, Note>) return ++notes_ <= kMaxNotes;
          return true;
        },
        r.body);
  }
  std::size_t skipped = 0;

 private:
  template <class K>
  static bool room(std::set<K>& seen, const K& key, std::size_t most) {
    return seen.count(key) != 0 || (seen.size() < most && seen.insert(key).second);
  }
  std::set<unsigned> gpus_, ranks_;
  std::set<std::string> nics_;
  std::size_t notes_ = 0;
};

StartRecord start_of(const std::string& path, const std::string& line) {
  std::optional<Record> r;
  try {
    r = parse_record(line);
  } catch (const PlanError& e) {
    throw not_ours(path, 1, said(e));
  }
  if (!r || !std::holds_alternative<StartRecord>(r->body))
    throw not_ours(path, 1, "it does not begin with a start record");
  return std::get<StartRecord>(r->body);
}

// The last `kTail` bytes within the bound: where the file's last record is.
std::string tail_of(const Fd& fd, const std::string& path, const ReadBounds& bounds) {
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0)
    throw PlanError(path + ": cannot be read: " + std::strerror(errno) +
                    ". Fix: check the path and its permissions");
  const auto size = static_cast<std::uint64_t>(st.st_size);
  const std::uint64_t end = std::min(size, bounds.file);
  const std::uint64_t from = end > kTail ? end - kTail : 0;
  std::string tail(static_cast<std::size_t>(end - from), '\0');
  std::size_t got = 0;
  while (got < tail.size()) {
    const ssize_t n = ::pread(fd.get(), tail.data() + got, tail.size() - got,
                              static_cast<off_t>(from + got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // shorter than it was a moment ago
    got += static_cast<std::size_t>(n);
  }
  tail.resize(got);
  return tail;
}

// The last complete record is the last line that parses; a line cut short is not one.
double last_time_in(const std::string& tail) {
  std::size_t end = tail.size();
  if (end > 0 && tail[end - 1] == '\n') --end;
  for (;;) {
    const std::size_t nl = end > 0 ? tail.rfind('\n', end - 1) : std::string::npos;
    const std::size_t begin = nl == std::string::npos ? 0 : nl + 1;
    try {
      const auto r = parse_record(std::string_view(tail).substr(begin, end - begin));
      if (r) return r->time;
    } catch (const PlanError&) {
      // Cut short, or the chunk's first, partial line: try the one before.
    }
    if (nl == std::string::npos) return 0;
    end = nl;
  }
}

}  // namespace

FileHead read_head(const MonitorFile& file, const ReadBounds& bounds) {
  const Fd fd = open_monitor_file(file);
  LineReader lines(fd, file.path, bounds);
  std::string line;
  const bool any = lines.next(line);
  if (lines.first_skipped() == 1) throw first_line_too_long(file.path, bounds);
  if (!any) throw PlanError(file.path + ": is empty; the sampler was stopped before it began");
  FileHead head{file, start_of(file.path, line), 0};
  head.last_time = last_time_in(tail_of(fd, file.path, bounds));
  return head;
}

FileHead read_head(const std::string& path, const ReadBounds& bounds) {
  return read_head(monitor_file(path), bounds);
}

std::vector<StepFiles> group_by_step(std::vector<FileHead> heads) {
  std::map<std::pair<std::uint32_t, std::uint32_t>, StepFiles> steps;
  for (FileHead& h : heads) {
    StepFiles& s = steps[{h.start.job, h.start.step}];
    s.job = h.start.job;
    s.step = h.start.step;
    s.nodes.push_back(std::move(h));
  }
  std::vector<StepFiles> out;
  for (auto& [key, step] : steps) {
    std::stable_sort(step.nodes.begin(), step.nodes.end(), [](const FileHead& a, const FileHead& b) {
      return a.start.node_index < b.start.node_index;
    });
    out.push_back(std::move(step));
  }
  return out;
}

NodeLog read_node_log(const MonitorFile& file, NodeSeriesBuilder* series, const ReadBounds& bounds) {
  const std::string& path = file.path;
  const Fd fd = open_monitor_file(file);
  LineReader lines(fd, path, bounds);
  NodeLog log;
  log.path = path;
  EntityBound bound;
  std::string line;
  bool more = lines.next(line);
  if (lines.first_skipped() == 1) throw first_line_too_long(path, bounds);
  for (; more; more = lines.next(line)) {
    const std::size_t line_no = lines.line_number();
    std::optional<Record> r;
    try {
      r = parse_record(line);
    } catch (const PlanError& e) {
      if (line_no == 1) throw not_ours(path, 1, said(e));
      // A sampler killed while writing leaves half a line at the end: that line only is dropped.
      if (!lines.complete()) {
        log.warnings.push_back(path + ":" + std::to_string(line_no) +
                               ": the last line is cut short and was skipped");
        break;
      }
      throw PlanError(path + ":" + std::to_string(line_no) + ": " + said(e) +
                      ". Fix: give ddp-report the files ddp-monitor wrote, unchanged");
    }
    if (!r) continue;
    if (line_no == 1 && !std::holds_alternative<StartRecord>(r->body))
      throw not_ours(path, 1, "it does not begin with a start record");
    if (!bound.admits(*r)) {
      ++bound.skipped;
      continue;
    }
    log.summary.add(*r);
    if (series) series->add(*r);
  }
  if (!log.summary.start)
    throw PlanError(path + ": is empty; the sampler was stopped before it began");
  for (std::string& w : lines.warnings()) log.warnings.push_back(std::move(w));
  if (bound.skipped > 0)
    log.warnings.push_back(path + ": " + std::to_string(bound.skipped) + " records were skipped: they name more than " +
                           std::to_string(kMaxGpus) + " GPUs, " + std::to_string(kMaxRanks) + " ranks or " +
                           std::to_string(kMaxNics) + " NICs, or are notes past " + std::to_string(kMaxNotes) +
                           ", which no node's sampler writes");
  log.summary.file = path;
  return log;
}

NodeLog read_node_log(const std::string& path, NodeSeriesBuilder* series, const ReadBounds& bounds) {
  return read_node_log(monitor_file(path), series, bounds);
}

StepData read_step(const StepFiles& files, const ReadBounds& bounds) {
  double origin = files.nodes.front().start.unix_time, end = origin, interval = 0;
  for (const FileHead& h : files.nodes) {
    origin = std::min(origin, h.start.unix_time);
    end = std::max(end, h.start.unix_time + h.last_time);
    interval = interval == 0 ? h.start.interval : std::min(interval, h.start.interval);
  }
  const std::size_t n = files.nodes.size();
  StepData step{files.job, files.step, files.nodes.front().start.nodes, {},
                StepSeries(TimeAxis::over(origin, end - origin, interval), n)};
  // The files are read in parallel, each by one thread from start to end; what a thread keeps
  // of a file when it is done is its summary and its values per time bin.
  std::vector<std::optional<NodeLog>> logs(n);
  std::vector<std::exception_ptr> errors(n);
  std::atomic<std::size_t> next{0};
  std::mutex done;
  const auto work = [&] {
    for (std::size_t i; (i = next++) < n;) {
      const FileHead& h = files.nodes[i];
      try {
        NodeSeriesBuilder builder(step.series.axis(), h.start.node, h.start.unix_time - origin);
        NodeLog log = read_node_log(h.file, &builder, bounds);
        std::vector<unsigned> idle;
        for (const GpuSummary* g : log.summary.idle_gpus()) idle.push_back(g->info.gpu);
        auto values = builder.finish(idle);
        const std::lock_guard<std::mutex> lock(done);
        step.series.add_node(i, std::move(values));
        logs[i] = std::move(log);
      } catch (...) {
        errors[i] = std::current_exception();
        next = n;  // the report fails: stop reading
      }
    }
  };
  std::vector<std::thread> threads;
  for (unsigned t = 1; t < std::min<std::size_t>(reading_threads(), n); ++t) threads.emplace_back(work);
  work();
  for (std::thread& t : threads) t.join();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
  for (auto& log : logs) step.nodes.push_back(std::move(*log));
  return step;
}

}  // namespace ddp::monitor
