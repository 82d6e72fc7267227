// The start of each helper program the plugin runs beside a step from local task 0 (the
// --ddp-monitor sampler, the failure watch): --help, --version, then the program, whose errors
// are said on stderr (the job's output) with the usage. Everything the helper did not open itself
// is the launcher's, and slurmstepd's descriptors must not live on in it.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace ddp::monitor {

// Closes every descriptor above 2 but `keep`.
void close_inherited_fds(int keep);

// `run` gets the arguments after the program's name; an exception ends the program with status 2.
int helper_main(int argc, char** argv, const char* name, const char* usage,
                const std::function<int(const std::vector<std::string>&)>& run);

}  // namespace ddp::monitor
