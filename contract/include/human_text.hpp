// Numbers as the programs' messages and reports show them to people, one rule for all of them
// (the monitor's summaries and reports, the trainer's and the download's progress lines).
#pragma once

#include <string>

namespace ddp::plan {

// `v` with `digits` decimals: "612.5".
std::string fixed_text(double v, int digits);

// 6.6 -> "6.6 s", 300 -> "5.0 min", 86400 -> "24.0 h".
std::string duration_text(double seconds);

// The local time now, as strftime(3) writes it with `format`.
std::string local_time_text(const char* format);

}  // namespace ddp::plan
