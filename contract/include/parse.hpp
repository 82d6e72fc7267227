// Strict parsing of the numbers and lists that users and admins type. Strict means: no sign, no
// spaces, no trailing junk, no overflow; "2x" or "-1" or "99999999999" is an error, never a 0.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ddp::plan {

// Parses a decimal unsigned integer in [min, max]. `what` names the option or variable for the
// error message, e.g. "--ddp-nodes".
std::uint64_t parse_unsigned(std::string_view what, std::string_view text, std::uint64_t min,
                             std::uint64_t max);

// "0,1,3" or "0-3" or "0-1,4": Slurm's index list syntax, expanded in the given order. Duplicates
// are an error (a GPU listed twice would give two ranks one device).
std::vector<unsigned> parse_index_list(std::string_view what, std::string_view text,
                                       unsigned max_index);

std::string join(const std::vector<unsigned>& values, const char* sep = ",");

// Text safe to put in an error message: printable ASCII kept, the rest escaped, long input cut.
std::string quoted(std::string_view text);

}  // namespace ddp::plan
