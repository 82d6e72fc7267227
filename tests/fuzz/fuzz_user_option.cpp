// --ddp-* option values as srun, sbatch and salloc hand them to the plugin. Input: NAME=VALUE,
// where VALUE is the rest of the input (newlines, NULs and all); without '=', the whole input is
// the value of --ddp-nodes.
#include <algorithm>

#include "error.hpp"
#include "fuzz_util.hpp"
#include "options.hpp"

namespace p = ddp::plan;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string in = fuzz::text(data, size);
  const std::size_t eq = in.find('=');
  const std::string name = eq == std::string::npos ? p::kOptNodes : in.substr(0, eq);
  const std::string value = eq == std::string::npos ? in : in.substr(eq + 1);

  p::UserOptions o;
  try {
    p::apply_user_option(o, name, value);
  } catch (const p::PlanError& e) {
    FUZZ_CHECK(std::string(e.what()).find('\n') == std::string::npos);  // one line in a log
    return 0;
  }
  FUZZ_CHECK(o.requested);
  if (o.nodes) FUZZ_CHECK(*o.nodes >= 1 && *o.nodes <= p::kMaxNodes);
  if (o.gpus_per_node) FUZZ_CHECK(*o.gpus_per_node >= 1 && *o.gpus_per_node <= p::kMaxGpusPerNode);
  if (o.port) FUZZ_CHECK(*o.port >= 1);
  if (o.profile) {
    // A name, never a path: nothing that could leave the profile directory.
    FUZZ_CHECK(!o.profile->empty() && o.profile->size() <= 64);
    FUZZ_CHECK(o.profile->find('/') == std::string::npos && o.profile->front() != '.');
    p::check_profile_name("re-check", *o.profile);
  }
  if (o.profile_file) {
    FUZZ_CHECK(o.profile_file->front() == '/');
    FUZZ_CHECK(o.profile_file->find('\0') == std::string::npos);
    FUZZ_CHECK(o.profile_file->find('\n') == std::string::npos);
  }
  // Slurm calls option callbacks more than once: the same value again must be harmless.
  p::UserOptions again = o;
  p::apply_user_option(again, name, value);
  FUZZ_CHECK(again.nodes == o.nodes && again.gpus_per_node == o.gpus_per_node &&
             again.port == o.port && again.profile == o.profile &&
             again.profile_file == o.profile_file && again.backend == o.backend &&
             again.bind == o.bind && again.verbose == o.verbose);
  return 0;
}
