// ddp-report on files another user wrote (an admin reports on users' jobs): what they hold
// reaches the terminal escaped and the JSON as UTF-8; a line or a file without end is read only
// so far; a link, a FIFO or a folder swapped under the report is not followed; the page is not
// written through a link put where it goes.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "html_page.hpp"
#include "printable.hpp"
#include "report_test_util.hpp"
#include "step_json.hpp"
#include "step_report.hpp"
#include "step_text.hpp"

using namespace ddp::monitor;
using namespace ddp::monitor::test;
namespace fs = std::filesystem;

namespace {

// Bytes a terminal acts on: what printable() changes in a line (or in a page, between its tabs).
std::string unprintable_in(const std::string& text, const char* breaks = "\n") {
  std::string bad;
  std::size_t from = 0;
  for (;;) {
    const std::size_t at = text.find_first_of(breaks, from);
    const std::string part = text.substr(from, at == std::string::npos ? std::string::npos : at - from);
    if (ddp::plan::printable(part) != part) bad += ddp::plan::printable(part) + "\n";
    if (at == std::string::npos) return bad;
    from = at + 1;
  }
}

StepData step_in(const std::string& dir) {
  std::vector<FileHead> heads;
  for (const MonitorFile& f : monitor_files({dir})) heads.push_back(read_head(f));
  return read_step(group_by_step(std::move(heads)).at(0));
}

// Whether `f` returns within `seconds`, run in a child that is killed when it does not: a read
// that blocks for good must fail the test, not hang it.
bool returns_within(int seconds, const std::function<void()>& f) {
  const pid_t pid = fork();
  if (pid == 0) {
    try {
      f();
    } catch (...) {
    }
    _exit(0);
  }
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > until) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

std::string contents(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

const std::string kStart = lines({{0, StartRecord{5, 0, "n1", 0, 1, 1, 100, 1}}});

}  // namespace

TEST(MonitorReportFiles, EscapeSequencesInAnyStringAreEscapedInTheText) {
  Dir d;
  const std::string title = "n1\x1b]0;owned\x07\x1b[2J\r";
  const std::string file =
      d.write("ddp-monitor-5.0-n\x1b[2J.jsonl",
              lines({{0, StartRecord{5, 0, title, 0, 1, 1, 100, 1}},
                     {0, GpuInfo{0, "\xc2\x9b" "31m", "GPU \xe2\x80\xae" "X", 1024}},
                     {0, TaskInfo{0, 0, 10}},
                     {0, Note{"NVML \x1b[8mhidden"}},
                     {1, GpuSample{0, 0, 10, 10}},
                     {1, NetSample{"eth\x1b[K0", false, 1, 1}}}) +
                  R"({"kind":"cpu","time":2,"ra)");
  const StepData s = step_in(d.path());
  const std::string text = format_step(s, judge(s));
  EXPECT_EQ(unprintable_in(text), "") << text;
  for (const char* escaped : {"n1\\x1b]0;owned\\x07\\x1b[2J\\x0d", "\\u{009b}31m", "GPU \\u{202e}X",
                              "NVML \\x1b[8mhidden", "eth\\x1b[K0", "ddp-monitor-5.0-n\\x1b[2J.jsonl"})
    EXPECT_NE(text.find(escaped), std::string::npos) << escaped << " in\n" << text;
  // The page shows the same escapes; JSON keeps the name as it was, escaped as JSON escapes.
  const std::string page = render_page({{&s, judge(s)}}, "t");
  EXPECT_EQ(unprintable_in(page, "\n\t"), "");
  EXPECT_NE(page.find("n1\\x1b]0;owned\\x07\\x1b[2J\\x0d GPU 0"), std::string::npos);
  EXPECT_EQ(step_json(s, judge(s))["nodes"][0]["node"], title);
}

TEST(MonitorReportFiles, InvalidUtf8InAFileNameDoesNotStopTheJson) {
  Dir d;
  d.write("ddp-monitor-5.0-n\xff\xfe.jsonl", node_file(5, 0, 1, "n1", 100, 50, 1, 2, -1, false) +
                                                 R"({"kind":"cpu","time":3,"ra)");
  const StepData s = step_in(d.path());
  std::string json;
  EXPECT_NO_THROW(json = step_json(s, judge(s)).dump());
  EXPECT_NE(json.find("ddp-monitor-5.0-n\xef\xbf\xbd\xef\xbf\xbd.jsonl"), std::string::npos) << json;
  const std::string text = format_step(s, judge(s));
  EXPECT_EQ(unprintable_in(text), "");
  EXPECT_NE(text.find("ddp-monitor-5.0-n\\xff\\xfe.jsonl:10: the last line is cut short"),
            std::string::npos)
      << text;
}

TEST(MonitorReportFiles, ALineOfTenMegabytesIsSkippedAndTheRestRead) {
  Dir d;
  const std::string note = R"({"kind":"note","time":1,"text":")" + std::string(10 << 20, 'a') + "\"}\n";
  const std::string f =
      d.write("a.jsonl", kStart + lines({{1, CpuSample{0, 50}}}) + note + std::string(10 << 20, '{') +
                             "\n" + lines({{2, CpuSample{0, 70}}, {2, EndRecord{"step-ended"}}}));
  const NodeLog log = read_node_log(f);
  ASSERT_EQ(log.summary.tasks.size(), 1u);
  EXPECT_EQ(log.summary.tasks[0].samples, 2u);
  EXPECT_TRUE(log.summary.notes.empty());
  EXPECT_EQ(log.summary.end_reason, "step-ended");
  EXPECT_EQ(log.warnings, std::vector<std::string>{
                              f + ": 2 lines (the first line 3) are longer than 64.0 KiB, which no "
                                  "ddp-monitor line is, and were skipped. Fix: give ddp-report the "
                                  "files ddp-monitor wrote, unchanged"});
  EXPECT_EQ(read_head(f).last_time, 2);
  // A first line so long is no start record; a last one so long, without its newline, is skipped.
  const std::string first = d.write("b.jsonl", std::string(100 << 10, ' ') + "\n" + kStart);
  EXPECT_EQ(error_of([&] { read_head(first); }),
            first + ":1: is not a ddp-monitor file: its first line is longer than 64.0 KiB. Fix: "
                    "give ddp-report the files ddp-monitor wrote (ddp-monitor-*.jsonl)");
  EXPECT_EQ(error_of([&] { read_node_log(first); }), error_of([&] { read_head(first); }));
  const std::string last =
      d.write("c.jsonl", kStart + lines({{1, CpuSample{0, 50}}}) + note.substr(0, 1 << 20));
  EXPECT_EQ(read_node_log(last).warnings.at(0),
            last + ": line 3 is longer than 64.0 KiB, which no ddp-monitor line is, and was "
                   "skipped. Fix: give ddp-report the files ddp-monitor wrote, unchanged");
}

TEST(MonitorReportFiles, AFileIsReadUpToItsBoundAndTheReportSaysSo) {
  Dir d;
  std::vector<Record> many = {{0, StartRecord{5, 0, "n1", 0, 1, 1, 100, 1}}};
  for (int i = 1; i <= 200; ++i) many.push_back({static_cast<double>(i), CpuSample{0, 50}});
  const std::string f = d.write("a.jsonl", lines(many));
  const ReadBounds bounds{kMaxLineBytes, 4096};
  const NodeLog log = read_node_log(f, nullptr, bounds);
  ASSERT_EQ(log.summary.tasks.size(), 1u);
  EXPECT_GT(log.summary.tasks[0].samples, 50u);
  EXPECT_LT(log.summary.tasks[0].samples, 150u);
  // The line the bound cut is not taken for one the sampler cut: one warning only.
  EXPECT_EQ(log.warnings, std::vector<std::string>{
                              f + ": only its first 4.0 KiB were read, more than ddp-monitor writes "
                                  "in weeks; what the report says of this node ends there. Fix: "
                                  "give ddp-report the files ddp-monitor wrote, unchanged"});
  const FileHead head = read_head(f, bounds);
  EXPECT_EQ(head.last_time, log.summary.duration);
  // A file that ends at the bound is read whole, without a word.
  const std::string exact = d.write("b.jsonl", lines({many.begin(), many.begin() + 3}));
  EXPECT_TRUE(read_node_log(exact, nullptr, {kMaxLineBytes, fs::file_size(exact)}).warnings.empty());
}

// A file that names more ranks, GPUs or NICs than any node has would cost a summary and a series
// each: past the bounds its records are skipped and counted, and the report stays small.
TEST(MonitorReportFiles, AFileNamingMillionsOfRanksKeepsABoundedReport) {
  Dir d;
  std::vector<Record> many = {{0, StartRecord{5, 0, "n1", 0, 1, 1, 100, 1}}};
  for (unsigned r = 0; r < 20000; ++r) many.push_back({1, CpuSample{r, 50}});
  for (unsigned g = 0; g < 1000; ++g) many.push_back({1, GpuSample{g, 10, std::nullopt, std::nullopt}});
  for (int n = 0; n < 1000; ++n) many.push_back({1, Note{"note"}});
  const std::string f = d.write("a.jsonl", lines(many));
  const NodeLog log = read_node_log(f);
  EXPECT_EQ(log.summary.tasks.size(), 4096u);
  EXPECT_EQ(log.summary.gpus.size(), 256u);
  EXPECT_EQ(log.summary.notes.size(), 256u);
  ASSERT_EQ(log.warnings.size(), 1u);
  EXPECT_NE(log.warnings[0].find(f + ": 17392 records were skipped: they name more than 256 GPUs, 4096 ranks"),
            std::string::npos)
      << log.warnings[0];
}

TEST(MonitorReportFiles, ALinkIsNotFollowed) {
  Dir d, elsewhere;
  const std::string target = elsewhere.write("secret.jsonl", kStart);
  fs::create_symlink(target, d.path() + "/ddp-monitor-5.0-n1.jsonl");
  const auto files = monitor_files({d.path()});
  ASSERT_EQ(files.size(), 1u);
  const std::string refused = error_of([&] { read_head(files[0]); });
  EXPECT_EQ(refused, files[0].path + ": is a symbolic link, and ddp-report follows none in the "
                                     "folders it reads (another user's link could point at any "
                                     "file). Fix: name the file it points to, if that is a "
                                     "ddp-monitor file");
  EXPECT_EQ(error_of([&] { read_node_log(files[0]); }), refused);
  EXPECT_EQ(error_of([&] { read_head(files[0].path); }), refused);
}

TEST(MonitorReportFiles, AFolderSwappedForALinkIsNotFollowed) {
  Dir d, elsewhere;
  d.write("ddp-monitor-5.0-n1.jsonl", node_file(5, 0, 1, "listed", 100, 50));
  elsewhere.write("ddp-monitor-5.0-n1.jsonl", node_file(5, 0, 1, "elsewhere", 100, 50));
  const auto files = monitor_files({d.path()});
  ASSERT_EQ(files.size(), 1u);
  const std::string moved = d.path() + "-moved";
  fs::rename(d.path(), moved);
  fs::create_directory_symlink(elsewhere.path(), d.path());
  EXPECT_EQ(read_head(files[0]).start.node, "listed");
  EXPECT_EQ(read_node_log(files[0]).summary.start->node, "listed");
  fs::remove_all(moved);
}

TEST(MonitorReportFiles, AFifoIsRefusedWithoutWaiting) {
  Dir d;
  const std::string fifo = d.path() + "/ddp-monitor-5.0-n1.jsonl";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  ASSERT_TRUE(returns_within(5, [&] { read_head(fifo); })) << "reading a FIFO hung";
  const std::string refused = fifo + ": is a FIFO, and ddp-monitor writes only regular files. "
                                     "Fix: name the files ddp-monitor wrote, or remove this one";
  EXPECT_EQ(error_of([&] { read_head(fifo); }), refused);
  EXPECT_EQ(error_of([&] { read_node_log(fifo); }), refused);
  // In a folder it is listed, so that the report says why it is not read.
  ASSERT_TRUE(returns_within(5, [&] { step_in(d.path()); })) << "reading a folder with a FIFO hung";
  EXPECT_EQ(error_of([&] { step_in(d.path()); }), refused);
}

TEST(MonitorReportFiles, ThePageReplacesALinkOrAFifoAtItsPathWithoutWritingThroughIt) {
  Dir d, elsewhere;
  const std::string victim = elsewhere.write("victim", "keep me");
  const std::string page = d.path() + "/report.html";
  fs::create_symlink(victim, page);
  write_page_file(page, "<html>1</html>");
  EXPECT_EQ(contents(victim), "keep me");
  EXPECT_FALSE(fs::is_symlink(page));
  EXPECT_EQ(contents(page), "<html>1</html>");
  // Written again, the page replaces the one before; nothing else is left beside it.
  write_page_file(page, "<html>2</html>");
  EXPECT_EQ(contents(page), "<html>2</html>");
  EXPECT_EQ(std::distance(fs::directory_iterator(d.path()), fs::directory_iterator()), 1);
  const std::string fifo = d.path() + "/fifo.html";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  ASSERT_TRUE(returns_within(5, [&] { write_page_file(fifo, "<html/>"); })) << "writing to a FIFO hung";
  write_page_file(fifo, "<html/>");
  EXPECT_TRUE(fs::is_regular_file(fifo));
  EXPECT_EQ(error_of([&] { write_page_file(d.path() + "/missing/report.html", "x"); }),
            d.path() + "/missing/report.html: cannot be written: its directory cannot be opened: No "
                       "such file or directory. Fix: choose a writable path for --html");
}
