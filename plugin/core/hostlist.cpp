#include "hostlist.hpp"

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

Hostlist create(std::string_view what, std::string_view list) {
  if (list.empty()) throw PlanError(std::string(what) + " is empty: no host to run on");
  if (list.size() > kMaxListLength || list.find('\0') != std::string_view::npos)
    throw PlanError(std::string(what) + "=" + quoted(list) + " is not a Slurm host list");
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
