#include "tasks_per_node.hpp"

#include <algorithm>
#include <string_view>

#include "error.hpp"
#include "parse.hpp"

namespace ddp::detail {
namespace {

// As many as a whole job may have (kMaxWorldSize); a larger count is not a real step.
constexpr unsigned kMaxTasksOnNode = 1u << 24;

[[noreturn]] void bad_syntax(const std::string& what, const std::string& text) {
  throw plan::PlanError(what + "=" + plan::quoted(text) +
              " is not Slurm's tasks-per-node list; expected counts with optional repeats, "
              "e.g. 4(x2),3. Was it changed by hand? Unset it and let srun set it.");
}

}  // namespace

std::vector<unsigned> expand_tasks_per_node(const std::string& what, const std::string& text,
                                            unsigned max_nodes) {
  if (text.empty()) bad_syntax(what, text);
  std::vector<unsigned> out;
  const std::string_view all(text);
  std::size_t start = 0;
  while (start <= all.size()) {
    const std::size_t comma = std::min(all.find(',', start), all.size());
    std::string_view item = all.substr(start, comma - start);
    unsigned repeat = 1;
    if (const std::size_t open = item.find('('); open != std::string_view::npos) {
      const std::string_view group = item.substr(open);
      if (group.size() < 4 || group.substr(0, 2) != "(x" || group.back() != ')')
        bad_syntax(what, text);
      try {
        repeat = static_cast<unsigned>(
            plan::parse_unsigned(what, group.substr(2, group.size() - 3), 1, max_nodes));
      } catch (const plan::PlanError&) {
        bad_syntax(what, text);
      }
      item = item.substr(0, open);
    }
    unsigned tasks = 0;
    try {
      tasks = static_cast<unsigned>(plan::parse_unsigned(what, item, 1, kMaxTasksOnNode));
    } catch (const plan::PlanError&) {
      bad_syntax(what, text);
    }
    if (repeat > max_nodes - out.size())
      throw plan::PlanError(what + "=" + plan::quoted(text) + " lists more than " +
                  std::to_string(max_nodes) + " nodes; Slurm steps are smaller than that.");
    out.insert(out.end(), repeat, tasks);
    start = comma + 1;
  }
  return out;
}

}  // namespace ddp::detail
