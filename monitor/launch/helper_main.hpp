// The start of each helper program the plugin runs beside a step from local task 0 (the
// --ddp-monitor sampler, the failure watch): --help, --version, then the program, whose errors
// are said on stderr (the job's output) with the usage. Everything the helper did not open itself
// is the launcher's, and slurmstepd's descriptors must not live on in it.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace ddp::monitor {

// The helper's ends of the control channel, as its arguments name them (-1: none): every other
// descriptor above 2 is closed, the one to read made non-blocking, and SIGPIPE ignored (a write
// to a slurmstepd that is gone is an error, not the helper's end). Returns the descriptor to say
// done on: `reply`, or `control` when there is no `reply` (a socket, as the tests give).
int adopt_control_fds(int control, int reply);

// `run` gets the arguments after the program's name; an exception ends the program with status 2.
int helper_main(int argc, char** argv, const char* name, const char* usage,
                const std::function<int(const std::vector<std::string>&)>& run);

}  // namespace ddp::monitor
