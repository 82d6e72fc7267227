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

// libslurm's parser leaks memory on every range it refuses (Slurm 22.05), and a few bytes of text
// can name billions of hosts, so a list reaches libslurm only after the contract's check: in the
// syntax Slurm itself writes and naming at most kMaxHosts hosts.
Hostlist create(std::string_view what, std::string_view list) {
  count_hosts(what, list);
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

std::uint64_t check_hostlist(std::string_view what, std::string_view list) {
  const Hostlist h = create(what, list);
  return static_cast<std::uint64_t>(slurm_hostlist_count(h.get()));
}

bool hostlist_contains(std::string_view list, std::string_view host) {
  const Hostlist h = create("host list", list);
  return slurm_hostlist_find(h.get(), std::string(host).c_str()) >= 0;
}

}  // namespace ddp::plan
