// Cluster profiles (YAML) as admins and, where the site allows it, users write them. The input is
// one to three files separated by a line "#file": the first is loaded by path and by name, the
// others sit next to it, so `extends` chains between fuzzed files are followed. Each file is
// named after its `name:` line (so that valid seeds pass the name check), else fuzz.yaml. The
// shipped profiles sit in the same directory, so `extends: generic-ib` works too.
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "error.hpp"
#include "fuzz_util.hpp"
#include "hostlist.hpp"
#include "profile.hpp"
#include "profile_json.hpp"
#include "profile_rules.hpp"

namespace fs = std::filesystem;
namespace p = ddp::plan;

namespace {

const std::string kSeparator = "\n#file\n";

std::string make_dir() {
  std::string pattern = (fs::temp_directory_path() / "ddp-fuzz-profile-XXXXXX").string();
  FUZZ_CHECK(::mkdtemp(pattern.data()) != nullptr);
  return pattern;
}

// Removed when the fuzzer exits normally; a crash leaves it in /tmp.
struct Dir {
  std::string path = make_dir();
  ~Dir() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
};

const std::string& dir() {
  static Dir d;
  return d.path;
}

std::string stem_for(const std::string& file, int index) {
  std::size_t at = std::string::npos;
  if (file.compare(0, 5, "name:") == 0)
    at = 0;
  else if (const std::size_t nl = file.find("\nname:"); nl != std::string::npos)
    at = nl + 1;
  if (at != std::string::npos) {
    std::size_t start = at + 5;
    while (start < file.size() && file[start] == ' ') ++start;
    const std::size_t end = file.find_first_of("\n #", start);
    const std::string name = file.substr(start, end == std::string::npos ? end : end - start);
    try {
      p::check_profile_name("name", name);
      return name;
    } catch (const p::PlanError&) {
    }
  }
  return "fuzz" + std::to_string(index);
}

void write(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

void check_profile(const p::Profile& profile) {
  FUZZ_CHECK(!profile.name.empty() && !profile.files.empty());
  (void)p::profile_to_json(profile).dump();
  const auto check_env = [](const p::NodeSettings& s) {
    for (const p::ProfileVariable& v : s.env) {
      FUZZ_CHECK(!ddp::plan::profile_rules::variable_name(v.name));  // no LD_*, no RANK...
      FUZZ_CHECK(v.value.find_first_of(std::string("\n\r\0", 3)) == std::string::npos);
    }
  };
  check_env(profile.settings);
  std::vector<std::string> hosts = {"n01", "gn01", "x"};
  for (const p::NodeOverride& o : profile.nodes) {
    check_env(o.settings);
    FUZZ_CHECK(p::hostlist_contains(o.match, p::first_host("match", o.match)));
    hosts.push_back(p::first_host("match", o.match));
  }
  if (profile.match.nodes) hosts.push_back(p::first_host("nodes", *profile.match.nodes));
  for (const std::string& h : hosts) {
    const p::ResolvedProfile r = p::resolve_for_node(profile, h);
    (void)p::profile_to_json(r).dump();
    if (r.port_range) FUZZ_CHECK(r.port_range->low <= r.port_range->high);
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  for (const auto& entry : fs::directory_iterator(DDP_PROFILE_DIR))
    fs::copy_file(entry.path(), fs::path(dir()) / entry.path().filename(),
                  fs::copy_options::overwrite_existing);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string in = fuzz::text(data, size);
  std::vector<std::string> files;
  for (std::size_t start = 0; files.size() < 3;) {
    const std::size_t end = in.find(kSeparator, start);
    files.push_back(in.substr(start, end == std::string::npos ? end : end - start));
    if (end == std::string::npos) break;
    start = end + kSeparator.size();
  }
  std::vector<std::string> written;
  for (std::size_t i = 0; i < files.size(); ++i) {
    const std::string stem = stem_for(files[i], static_cast<int>(i));
    const std::string path = dir() + "/" + stem + ".yaml";
    write(path, files[i]);
    written.push_back(path);
  }
  const std::string first = written.front();
  const std::string name = fs::path(first).stem().string();
  try {
    check_profile(p::load_profile_file(first));
  } catch (const p::PlanError& e) {
    FUZZ_CHECK(std::string(e.what()).find('\n') == std::string::npos);
  }
  try {
    check_profile(p::load_profile(dir(), name));
  } catch (const p::PlanError&) {
  }
  try {
    const p::ProfileChoice c = p::select_profile(dir(), std::nullopt, std::nullopt,
                                                 std::string("vega"), "gn01");
    if (c.profile) check_profile(*c.profile);
  } catch (const p::PlanError&) {
  }
  // Put the shipped profiles back where a fuzzed file replaced one, and drop the others.
  for (const std::string& path : written) {
    const fs::path shipped = fs::path(DDP_PROFILE_DIR) / fs::path(path).filename();
    std::error_code ignored;
    if (fs::exists(shipped))
      fs::copy_file(shipped, path, fs::copy_options::overwrite_existing, ignored);
    else
      fs::remove(path, ignored);
  }
  return 0;
}
