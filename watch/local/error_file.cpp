#include "error_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <nlohmann/json.hpp>

namespace ddp::watch {
namespace {

using json = nlohmann::json;

constexpr std::size_t kMaxFile = 1 << 20;

std::string trim(std::string s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  const auto e = s.find_last_not_of(" \t\r\n");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// The innermost frame: the last 'File "...", line N, in F' line of the traceback (after a
// chained exception, the last one belongs to the exception that was recorded).
std::string innermost_frame(const std::string& callstack) {
  std::string found;
  std::size_t pos = 0;
  while (pos < callstack.size()) {
    auto end = callstack.find('\n', pos);
    if (end == std::string::npos) end = callstack.size();
    const std::string line = trim(callstack.substr(pos, end - pos));
    if (line.rfind("File \"", 0) == 0) found = line;
    pos = end + 1;
  }
  return found;
}

std::string text_of(const json& j) {
  if (j.is_string()) return j.get<std::string>();
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace

std::optional<ErrorRecord> parse_error_file(std::string_view text) {
  const json j = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return std::nullopt;
  const auto m = j.find("message");
  if (m == j.end()) return std::nullopt;
  ErrorRecord r;
  // torch's "new message format" is a plain string.
  if (m->is_string()) {
    r.error = m->get<std::string>();
    return r;
  }
  if (!m->is_object()) return std::nullopt;
  const auto inner = m->find("message");
  if (inner == m->end()) return std::nullopt;
  r.error = trim(text_of(*inner));
  const auto extra = m->find("extraInfo");
  if (extra != m->end() && extra->is_object()) {
    const auto stack = extra->find("py_callstack");
    if (stack != extra->end() && stack->is_string()) r.where = innermost_frame(stack->get<std::string>());
    const auto ts = extra->find("timestamp");
    if (ts != extra->end() && ts->is_string()) {
      try {
        r.at_ns = std::stoll(ts->get<std::string>()) * 1000000000;
      } catch (const std::exception&) {
      }
    }
  }
  return r;
}

std::optional<ErrorRecord> read_error_file(const std::string& path) {
  // O_NONBLOCK: a FIFO put there must not hold the watch; fstat then refuses it.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
  if (fd < 0) return std::nullopt;
  struct stat st {};
  std::string text;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && static_cast<std::size_t>(st.st_size) <= kMaxFile) {
    char buf[8192];
    for (;;) {
      const ssize_t n = ::read(fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      text.append(buf, static_cast<std::size_t>(n));
      if (text.size() > kMaxFile) break;
    }
  }
  ::close(fd);
  if (text.empty() || text.size() > kMaxFile) return std::nullopt;
  auto r = parse_error_file(text);
  if (r) r->at_ns = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  return r;
}

}  // namespace ddp::watch
