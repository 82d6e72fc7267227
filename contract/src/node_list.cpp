#include "node_list.hpp"

#include <algorithm>

#include "error.hpp"
#include "names.hpp"
#include "parse.hpp"

namespace ddp::plan {
namespace {

// The longest list accepted; a longer one is hostile or broken.
constexpr std::size_t kMaxListLength = 1 << 20;
// libslurm refuses a larger range ("n[0-65536]") and cannot write one.
constexpr std::uint64_t kMaxRange = 65536;
// 10^19 - 1 still fits in an unsigned long.
constexpr std::size_t kMaxEndDigits = 19;

bool separator(char c) { return c == ',' || c == ' '; }

// The hosts one bracket names ("1-3,7" names 4), or 0 when its syntax is not Slurm's.
std::uint64_t bracket_size(std::string_view ranges) {
  std::uint64_t total = 0;
  std::size_t start = 0;
  while (start <= ranges.size()) {
    const std::size_t comma = std::min(ranges.find(',', start), ranges.size());
    const std::string_view item = ranges.substr(start, comma - start);
    const std::size_t dash = item.find('-');
    const std::string_view low_text = item.substr(0, dash);
    const std::string_view high_text =
        dash == std::string_view::npos ? low_text : item.substr(dash + 1);
    std::uint64_t low = 0, high = 0;
    try {
      low = parse_unsigned("range", low_text, 0, 999999999);
      high = parse_unsigned("range", high_text, 0, 999999999);
    } catch (const PlanError&) {
      return 0;
    }
    if (high < low || high - low >= kMaxRange) return 0;
    total += high - low + 1;
    start = comma + 1;
  }
  return total;
}

PlanError not_a_list(std::string_view what, std::string_view list, const std::string& why) {
  return PlanError(std::string(what) + "=" + quoted(list) + " is not a Slurm host list (" + why +
                   "); expected e.g. node[01-04],gpu7");
}

}  // namespace

std::uint64_t count_hosts(std::string_view what, std::string_view list) {
  if (list.empty()) throw PlanError(std::string(what) + " is empty: no host to run on");
  if (list.size() > kMaxListLength) throw not_a_list(what, list, "it is too long");
  std::uint64_t total = 0;
  std::uint64_t hosts = 0;  // named by the current name: the product of its brackets
  // Text after a name's last bracket ("n[1-2]-ib"): Slurm takes the whole name as one literal
  // host, brackets and all, which no node is called.
  std::size_t suffix_at = std::string_view::npos;
  // Significant digits at the end of the current name: Slurm reads them as an unsigned long and
  // writes a larger number back as 18446744073709551615, another host.
  std::size_t end_digits = 0;
  for (std::size_t i = 0; i <= list.size(); ++i) {
    const char c = i < list.size() ? list[i] : ',';
    if (separator(c)) {
      if (suffix_at != std::string_view::npos)
        throw not_a_list(what, list,
                         "the text " + quoted(list.substr(suffix_at, i - suffix_at)) +
                             " after a name's last range; Slurm reads no suffix there");
      if (end_digits > kMaxEndDigits)
        throw not_a_list(what, list,
                         "a name ends in a number of more than " + std::to_string(kMaxEndDigits) +
                             " digits, which Slurm cannot count to");
      total += hosts;
      hosts = 0;
      end_digits = 0;
    } else if (name_char(c)) {
      if (hosts > 0 && suffix_at == std::string_view::npos && list[i - 1] == ']') suffix_at = i;
      hosts = std::max<std::uint64_t>(hosts, 1);
      const bool digit = c >= '0' && c <= '9';
      end_digits = !digit ? 0 : end_digits + (end_digits > 0 || c != '0' ? 1 : 0);
    } else if (c == '[') {
      suffix_at = std::string_view::npos;
      end_digits = 0;
      const std::size_t close = list.find(']', i);
      const std::size_t inner = list.find('[', i + 1);
      if (close == std::string_view::npos || inner < close)
        throw not_a_list(what, list, "an unbalanced '['");
      const std::uint64_t size = bracket_size(list.substr(i + 1, close - i - 1));
      if (size == 0)
        throw not_a_list(what, list,
                         "the range " + quoted(list.substr(i, close - i + 1)) +
                             " is not N, LOW-HIGH or a list of them, low before high, at most " +
                             std::to_string(kMaxRange) + " hosts each");
      hosts = std::max<std::uint64_t>(hosts, 1) * size;
      i = close;
    } else {
      throw not_a_list(what, list,
                       c == ']' ? "an unbalanced ']'"
                                : "the character " + quoted(std::string_view(&list[i], 1)) +
                                      "; host names are letters, digits, '-', '_' and '.'");
    }
    if (hosts > kMaxHosts || total > kMaxHosts)
      throw not_a_list(what, list,
                       "it names more than " + std::to_string(kMaxHosts) +
                           " hosts, more than any cluster has");
  }
  if (total == 0) throw not_a_list(what, list, "it names no host");
  return total;
}

std::string first_host(std::string_view what, std::string_view list) {
  count_hosts(what, list);
  // The list is well formed: skip leading separators, then copy the first name with each
  // bracket replaced by its first number as written (Slurm pads to the width of the low end).
  std::size_t i = 0;
  while (separator(list[i])) ++i;
  std::string host;
  for (; i < list.size() && !separator(list[i]); ++i) {
    if (list[i] != '[') {
      host += list[i];
      continue;
    }
    const std::size_t close = list.find(']', i);
    const std::string_view ranges = list.substr(i + 1, close - i - 1);
    host += ranges.substr(0, ranges.find_first_of(",-"));
    i = close;
  }
  return host;
}

std::string quoted_list(std::string_view list) {
  if (list.size() <= kMaxQuotedList) return std::string(list);
  // The last separator at which the first kMaxQuotedList characters can end, and whether it lies
  // inside a bracket.
  std::size_t cut = 0;
  bool cut_in_bracket = false, in_bracket = false;
  for (std::size_t i = 0; i < kMaxQuotedList; ++i) {
    if (list[i] == '[') in_bracket = true;
    if (list[i] == ']') in_bracket = false;
    if (separator(list[i]) && i > 0) {
      cut = i;
      cut_in_bracket = in_bracket;
    }
  }
  if (cut == 0) {  // no separator to cut at: inside one long name or bracket
    cut = kMaxQuotedList;
    cut_in_bracket = in_bracket;
  }
  std::string out(list.substr(0, cut));
  if (cut_in_bracket) out += ']';
  out += ",...";
  try {
    out += " (" + std::to_string(count_hosts("list", list)) + " hosts)";
  } catch (const PlanError&) {
  }
  return out;
}

}  // namespace ddp::plan
