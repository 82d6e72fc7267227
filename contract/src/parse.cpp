#include "parse.hpp"

#include <algorithm>
#include <cstdio>

#include "error.hpp"

namespace ddp::plan {

std::string quoted(std::string_view text) {
  constexpr std::size_t kMaxShown = 64;
  std::string out = "'";
  for (std::size_t i = 0; i < text.size() && i < kMaxShown; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f && c != '\'') {
      out += static_cast<char>(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
  if (text.size() > kMaxShown) out += "...";
  out += "'";
  return out;
}

std::uint64_t parse_unsigned(std::string_view what, std::string_view text, std::uint64_t min,
                             std::uint64_t max) {
  const std::string range = std::to_string(min) + ".." + std::to_string(max);
  if (text.empty())
    throw PlanError(std::string(what) + " needs a value: a whole number in " + range);
  std::uint64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9')
      throw PlanError(std::string(what) + "=" + quoted(text) +
                      " is not a whole number; give a number in " + range);
    const std::uint64_t digit = static_cast<std::uint64_t>(c - '0');
    if (value > (UINT64_MAX - digit) / 10)
      throw PlanError(std::string(what) + "=" + quoted(text) + " is too large; allowed: " + range);
    value = value * 10 + digit;
  }
  if (value < min || value > max)
    throw PlanError(std::string(what) + "=" + quoted(text) + " is out of range; allowed: " + range);
  return value;
}

namespace {

PlanError list_error(std::string_view what, std::string_view text, const std::string& why) {
  return PlanError(std::string(what) + "=" + quoted(text) + ": " + why +
                   "; write indices and low-high ranges separated by commas, e.g. 0-3,8");
}

// One end of a list item: digits only, at most max_index (checked digit by digit, so no number
// is too long to refuse).
unsigned list_number(std::string_view what, std::string_view text, std::string_view item,
                     std::string_view digits, unsigned max_index) {
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string_view::npos)
    throw list_error(what, text,
                     item.find(':') != std::string_view::npos
                         ? quoted(item) + " has a stride, which neither Slurm nor the kernel writes"
                         : quoted(item) + " is not an index or a low-high range");
  std::uint64_t value = 0;
  for (char c : digits) {
    value = value * 10 + static_cast<std::uint64_t>(c - '0');
    if (value > max_index)
      throw list_error(what, text, quoted(item) + " is out of range; allowed: 0.." +
                                       std::to_string(max_index));
  }
  return static_cast<unsigned>(value);
}

}  // namespace

std::vector<unsigned> parse_index_list(std::string_view what, std::string_view text,
                                       unsigned max_index) {
  const std::size_t end = text.find_last_not_of(" \t\n");
  const std::string_view list =
      end == std::string_view::npos ? std::string_view() : text.substr(0, end + 1);
  std::vector<unsigned> out;
  if (list.empty()) return out;
  // Indices seen so far, so that a duplicate is found at once: "0-65535,0-65535,..." must not
  // build billions of entries, nor compare each new index with every earlier one.
  std::vector<bool> seen;
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    const std::string_view item = list.substr(start, comma - start);
    if (item.empty()) throw list_error(what, text, "an item is empty");
    const std::size_t dash = item.find('-');
    const unsigned first = list_number(what, text, item, item.substr(0, dash), max_index);
    const unsigned last = dash == std::string_view::npos
                              ? first
                              : list_number(what, text, item, item.substr(dash + 1), max_index);
    if (last < first) throw list_error(what, text, "range " + quoted(item) + " runs backwards");
    if (seen.size() <= last) seen.resize(static_cast<std::size_t>(last) + 1);
    for (std::uint64_t v = first; v <= last; ++v) {
      if (seen[v])
        throw list_error(what, text,
                         "it lists " + std::to_string(v) + " twice; each index may appear once");
      seen[v] = true;
      out.push_back(static_cast<unsigned>(v));
    }
    start = comma + 1;
  }
  return out;
}

std::string format_index_list(std::vector<unsigned> values) {
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  std::string out;
  for (std::size_t i = 0; i < values.size();) {
    std::size_t j = i;
    while (j + 1 < values.size() && values[j + 1] == values[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(values[i]);
    if (j > i) out += '-' + std::to_string(values[j]);
    i = j + 1;
  }
  return out;
}

std::string join(const std::vector<unsigned>& values, const char* sep) {
  std::string out;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i) out += sep;
    out += std::to_string(values[i]);
  }
  return out;
}

}  // namespace ddp::plan
