#include "watch_control.hpp"

#include <sstream>

namespace ddp::watch {

std::string task_line(unsigned local, unsigned global, long pid, std::uint64_t start_time) {
  return "task " + std::to_string(local) + " " + std::to_string(global) + " " +
         std::to_string(pid) + " " + std::to_string(start_time) + "\n";
}

std::string exit_line(unsigned local, unsigned global, int status, std::int64_t wall_ns) {
  return "exit " + std::to_string(local) + " " + std::to_string(global) + " " +
         std::to_string(status) + " " + std::to_string(wall_ns) + "\n";
}

std::optional<ControlLine> parse_control_line(std::string_view line) {
  std::istringstream in{std::string(line)};
  std::string word;
  if (!(in >> word)) return std::nullopt;
  ControlLine m;
  if (word == "task") {
    m.kind = ControlLine::Kind::Task;
    if (!(in >> m.local >> m.global >> m.pid >> m.start_time) || m.pid <= 0) return std::nullopt;
  } else if (word == "exit") {
    m.kind = ControlLine::Kind::Exit;
    if (!(in >> m.local >> m.global >> m.status >> m.wall_ns)) return std::nullopt;
  } else if (word == "watch") {
    m.kind = ControlLine::Kind::Launched;
    if (!(in >> m.pid) || m.pid <= 0) return std::nullopt;
  } else if (word == "done") {
    m.kind = ControlLine::Kind::Done;
  } else {
    return std::nullopt;
  }
  return m;
}

}  // namespace ddp::watch
