// The cli_filter (Lua, run by sbatch/salloc/srun) refuses counts before the plugin sees them; its
// limits must be the C++ ones, or a request passes one check and fails the other.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "limits.hpp"

namespace {

// The value of `local NAME = NUMBER` in the shipped cli_filter.lua; fails the test when absent.
unsigned long lua_constant(const std::string& name) {
  std::ifstream in(DDP_CLI_FILTER);
  std::stringstream text;
  text << in.rdbuf();
  std::smatch m;
  const std::string source = text.str();
  const std::regex line("(^|\n)local " + name + " = ([0-9]+)\\s*(\n|$)");
  if (!std::regex_search(source, m, line)) {
    ADD_FAILURE() << DDP_CLI_FILTER << " has no line `local " << name << " = NUMBER`";
    return 0;
  }
  return std::stoul(m[2].str());
}

}  // namespace

TEST(LuaLimits, CliFilterUsesTheContractsLimits) {
  EXPECT_EQ(lua_constant("MAX_NODES"), ddp::plan::kMaxNodes);
  EXPECT_EQ(lua_constant("MAX_GPUS"), ddp::plan::kMaxGpusPerNode);
}
