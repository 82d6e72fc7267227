#include "hostlist.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>

#include "error.hpp"
#include "parse.hpp"

// Only the declarations are needed; inside srun and slurmstepd the symbols come from the
// process's own libslurmfull, elsewhere from libslurm.
extern "C" {
#include <slurm/slurm.h>
}

namespace ddp::plan {
namespace {

struct HostlistDeleter {
  void operator()(hostlist* h) const { slurm_hostlist_destroy(h); }
};
using Hostlist = std::unique_ptr<hostlist, HostlistDeleter>;

// The longest host name Slurm accepts; a longer "list" is hostile or broken.
constexpr std::size_t kMaxListLength = 1 << 20;
// libslurm refuses a larger range ("n[0-65536]") and cannot write one.
constexpr std::uint64_t kMaxRange = 65536;

bool host_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_' || c == '.';
}

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

// How many hosts `list` names. libslurm's parser leaks memory on every range it refuses (Slurm
// 22.05), and a few bytes of text can name billions of hosts, so a list reaches libslurm only in
// the syntax Slurm itself writes and only when it names at most kMaxHosts hosts.
std::uint64_t checked_count(std::string_view what, std::string_view list) {
  const auto bad = [&](const std::string& why) {
    return PlanError(std::string(what) + "=" + quoted(list) + " is not a Slurm host list (" + why +
                     "); expected e.g. node[01-04],gpu7");
  };
  std::uint64_t total = 0;
  std::uint64_t hosts = 0;  // named by the current name: the product of its brackets
  for (std::size_t i = 0; i <= list.size(); ++i) {
    const char c = i < list.size() ? list[i] : ',';
    if (c == ',' || c == ' ') {
      total += hosts;
      hosts = 0;
    } else if (host_char(c)) {
      hosts = std::max<std::uint64_t>(hosts, 1);
    } else if (c == '[') {
      const std::size_t close = list.find(']', i);
      const std::size_t inner = list.find('[', i + 1);
      if (close == std::string_view::npos || inner < close) throw bad("an unbalanced '['");
      const std::uint64_t size = bracket_size(list.substr(i + 1, close - i - 1));
      if (size == 0)
        throw bad("the range " + quoted(list.substr(i, close - i + 1)) +
                  " is not N, LOW-HIGH or a list of them, low before high, at most " +
                  std::to_string(kMaxRange) + " hosts each");
      hosts = std::max<std::uint64_t>(hosts, 1) * size;
      i = close;
    } else {
      throw bad(c == ']' ? "an unbalanced ']'"
                         : "the character " + quoted(std::string_view(&list[i], 1)) +
                               "; host names are letters, digits, '-', '_' and '.'");
    }
    if (hosts > kMaxHosts || total > kMaxHosts)
      throw bad("it names more than " + std::to_string(kMaxHosts) +
                " hosts, more than any cluster has");
  }
  if (total == 0) throw bad("it names no host");
  return total;
}

Hostlist create(std::string_view what, std::string_view list) {
  if (list.empty()) throw PlanError(std::string(what) + " is empty: no host to run on");
  if (list.size() > kMaxListLength)
    throw PlanError(std::string(what) + "=" + quoted(list) + " is not a Slurm host list");
  checked_count(what, list);
  const std::string text(list);
  Hostlist h(slurm_hostlist_create(text.c_str()));
  if (!h || slurm_hostlist_count(h.get()) <= 0)
    throw PlanError(std::string(what) + "=" + quoted(list) +
                    " is not a Slurm host list (expected e.g. node[01-04],gpu7)");
  return h;
}

// libslurm passes an unbalanced "n[1-" through as one literal "host"; no real host is named so.
bool plausible_host(const std::string& host) {
  for (char c : host)
    if (c == '[' || c == ']' || c == ',' || static_cast<unsigned char>(c) <= ' ') return false;
  return !host.empty();
}

std::string shift(std::string_view what, std::string_view list, hostlist* h) {
  char* name = slurm_hostlist_shift(h);
  std::string out = name ? name : "";
  std::free(name);
  if (name && !plausible_host(out))
    throw PlanError(std::string(what) + "=" + quoted(list) +
                    " is not a Slurm host list (expected e.g. node[01-04],gpu7)");
  return out;
}

}  // namespace

std::vector<std::string> expand_hostlist(std::string_view what, std::string_view list) {
  Hostlist h = create(what, list);
  std::vector<std::string> hosts;
  hosts.reserve(static_cast<std::size_t>(slurm_hostlist_count(h.get())));
  for (std::string host = shift(what, list, h.get()); !host.empty();
       host = shift(what, list, h.get()))
    hosts.push_back(std::move(host));
  return hosts;
}

std::string first_host(std::string_view what, std::string_view list) {
  Hostlist h = create(what, list);
  std::string host = shift(what, list, h.get());
  if (host.empty()) throw PlanError(std::string(what) + "=" + quoted(list) + " names no host");
  return host;
}

}  // namespace ddp::plan
