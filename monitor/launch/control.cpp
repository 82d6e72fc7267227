#include "control.hpp"

#include <sstream>

namespace ddp::monitor {

std::string task_message(unsigned local, unsigned global, long pid, std::uint64_t start_time) {
  return "task " + std::to_string(local) + " " + std::to_string(global) + " " +
         std::to_string(pid) + " " + std::to_string(start_time) + "\n";
}

std::string exit_message(unsigned local, unsigned global, int status, std::int64_t wall_ns) {
  return "exit " + std::to_string(local) + " " + std::to_string(global) + " " +
         std::to_string(status) + " " + std::to_string(wall_ns) + "\n";
}

std::optional<ControlMessage> parse_control(std::string_view line) {
  std::istringstream in{std::string(line)};
  std::string word;
  if (!(in >> word)) return std::nullopt;
  ControlMessage m;
  if (word == "task") {
    m.kind = ControlMessage::Kind::Task;
    if (!(in >> m.local >> m.global >> m.pid) || m.pid <= 0 || m.local < 0 || m.global < 0)
      return std::nullopt;
    if (!(in >> m.start_time)) m.start_time = 0;
  } else if (word == "exit") {
    m.kind = ControlMessage::Kind::Exit;
    if (!(in >> m.local >> m.global >> m.status >> m.wall_ns) || m.local < 0 || m.global < 0)
      return std::nullopt;
  } else if (word == "helper") {
    m.kind = ControlMessage::Kind::Helper;
    if (!(in >> m.pid >> m.start_time) || m.pid <= 0 || m.start_time == 0) return std::nullopt;
  } else if (word == "end") {
    m.kind = ControlMessage::Kind::End;
  } else if (word == "done") {
    m.kind = ControlMessage::Kind::Done;
  } else {
    return std::nullopt;
  }
  return m;
}

bool LineBuffer::feed(const char* data, std::size_t size) {
  if (overflowed_) return false;
  if (size > budget_ - taken_) {
    overflowed_ = true;
    return false;
  }
  taken_ += size;
  // Returned lines are dropped only now, so that next() never moves the rest.
  if (start_ > 0) {
    pending_.erase(0, start_);
    scanned_ -= start_;
    start_ = 0;
  }
  pending_.append(data, size);
  return true;
}

std::optional<std::string> LineBuffer::next() {
  if (overflowed_) return std::nullopt;
  const std::size_t nl = pending_.find('\n', scanned_);
  if (nl == std::string::npos) {
    scanned_ = pending_.size();
    if (scanned_ - start_ > kMaxControlLine) overflowed_ = true;
    return std::nullopt;
  }
  if (nl - start_ > kMaxControlLine) {
    overflowed_ = true;
    return std::nullopt;
  }
  std::string line = pending_.substr(start_, nl - start_);
  start_ = scanned_ = nl + 1;
  return line;
}

}  // namespace ddp::monitor
