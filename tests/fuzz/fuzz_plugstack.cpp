// plugstack.conf arguments: `required spank_ddp.so key=value ...`. Slurm splits the line at
// blanks; the input is split the same way, so one input is one plugstack line's arguments.
#include "error.hpp"
#include "fuzz_util.hpp"
#include "options.hpp"

namespace p = ddp::plan;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string in = fuzz::text(data, size);
  std::vector<std::string> args;
  std::string cur;
  for (char c : in) {
    if (c == ' ' || c == '\t' || c == '\n') {
      if (!cur.empty()) args.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) args.push_back(cur);

  p::PlugstackConfig c;
  try {
    c = p::parse_plugstack_args(args);
  } catch (const p::PlanError& e) {
    FUZZ_CHECK(std::string(e.what()).find('\n') == std::string::npos);
    return 0;
  }
  FUZZ_CHECK(!c.profile_dir.empty() && c.profile_dir.front() == '/');
  FUZZ_CHECK(c.port_range.low >= 1024 && c.port_range.low <= c.port_range.high);
  FUZZ_CHECK(c.port_range.high < 32768 || c.port_range.low > 60999);
  if (c.default_profile) p::check_profile_name("re-check", *c.default_profile);
  if (c.topology_xml) FUZZ_CHECK(c.topology_xml->front() == '/');
  return 0;
}
